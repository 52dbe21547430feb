"""Command line: ``python -m mrtr_kit`` (or ``mrtr-kit``).

* ``serve --example NAME [--host 127.0.0.1] [--port 8765]`` — run an example server over
  Streamable HTTP at ``http://HOST:PORT/mcp`` (``--example conformance`` for the suite). The
  examples are the course's, not the library's: the course package (``mrtr-course``, in
  ``course/``) registers them under the entry-point group ``mrtr_kit.examples``, and without
  it ``--example`` says what to install (``_example_builder``);
  ``--state-codec aead|hmac`` (default aead) and
  ``--ledger memory|sqlite:PATH|redis://HOST:PORT/DB`` choose how requestState is protected
  and where single-use states and the examples' business records (payouts, bookings) are
  kept; a Redis without persistence is refused unless ``--allow-volatile-ledger``. Several
  processes that serve one fleet share ``MRTR_KIT_STATE_KEYS`` (or ``MRTR_KIT_STATE_KEY``)
  and the ledger; ``MRTR_KIT_BEARER_TOKENS="alice:<token>,..."`` turns on bearer-token auth,
  or ``--principal-of MODULE:ATTRIBUTE`` names your own check of the request's headers (sync
  or async; the principal, or None for 401; ``auth.FromHeaders``);
  ``--instance-name NAME`` adds an ``X-Mcp-Instance: NAME`` header to every response (a fleet);
* ``serve --app MODULE:ATTRIBUTE`` — your own ``McpServer`` instead of an example, found like
  ``uvicorn module:app`` (the current folder first on ``sys.path``): the server itself, served
  as built, or a callable returning one (given the CLI's keys, ``--state-codec`` and
  ``--ledger`` if it takes ``state_keys``, ``state_codec`` and ``ledger`` keywords; see
  ``_app_server``). A bad spec, a missing module or a wrong type is one line and status 2;
  ``--allowed-host NAME`` (repeatable) admits a public name in Host and Origin besides the
  loopback ones (HTTP-27, HTTP-29); ``--forwarded-allow-ips IP[,IP]`` trusts a proxy's
  ``X-Forwarded-For``/``-Proto`` (uvicorn's settings; ``X-Forwarded-Host`` is never read);
  ``--state-keys-file PATH`` reads the keys ``MRTR_KIT_STATE_KEYS`` would hold from a file;
  ``--clock-skew SECONDS`` is ``McpServer(clock_skew_s=...)`` for an example or a factory that
  takes ``clock_skew_s`` (refused for any other ``--app``);
* ``serve --stdio --example NAME`` — the same example server (and ``--state-codec``,
  ``--ledger`` options) over stdio instead: newline-delimited JSON-RPC on stdin and stdout,
  for a client that starts the server as its child process (a 2025-11-25 client too, below).
  stdout carries JSON-RPC lines only, no banner; logs go to stderr (STDIO-1). It ends, with
  status 0, when stdin closes.
  No authentication: the client that started the process is the user, named by
  ``--principal NAME`` or ``MRTR_KIT_PRINCIPAL`` (else no principal); HTTP's
  ``MRTR_KIT_BEARER_TOKENS``, ``--principal-of``, ``--host``, ``--port`` and
  ``--instance-name`` do not apply;
  ``--trace PATH`` appends one JSON line per answered request to PATH, flushed at once (the
  server's view of each round, ``server/rounds.py``; a notebook follows it with
  ``mrtr_course/plain/server_trace.py``);
* ``ledger init sqlite:PATH`` — create the SQLite ledger file ``serve --ledger sqlite:PATH``
  opens; ``serve`` refuses a missing one (one line, status 2) rather than create it, and a
  file that is a ledger already is left as it is (status 1; see ``cmd_ledger_init``);
* ``serve`` serves both protocol eras by default, over HTTP and stdio: a 2026-07-28 client gets
  MRTR rounds, a 2025-11-25 client (its ``initialize`` first) a session whose handlers' questions
  are pushed to it (``server/era2025.py``); ``--modern-only`` serves 2026-07-28 only, and a
  2025-11-25 ``initialize`` gets -32022 naming the supported versions (VER-5);
* ``examples`` — list the example names the installed course registers;
* ``conformance-client URL`` — the client the official conformance suite launches.

The course's own commands (``serve --legacy``, ``demo``) are ``python -m mrtr_course``'s,
which builds on this parser; here they only say where they went (``MOVED``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from .server.auth import BearerTokens, FromHeaders
    from .server.core import McpServer
    from .server.keyring import KeyRing

DEFAULT_PORT = 8765
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def _url(host: str, port: int) -> str:
    return f"http://[{host}]:{port}/mcp" if ":" in host else f"http://{host}:{port}/mcp"


def cmd_serve(args: argparse.Namespace) -> int:
    """``serve``: an example over Streamable HTTP; ``--stdio``, over stdin and stdout
    (``_serve_stdio``); ``--app module:attribute``, the user's own ``McpServer`` instead of an
    example (``_app_server``)."""
    if args.app is None and args.example is None:
        args.example = "lessons"
    try:
        builder = None if args.app else _example_builder(args.example)
    except _Refused as exc:
        print(f"serve: {exc}", file=sys.stderr)
        return 2
    if args.stdio:
        return _serve_stdio(args, builder)

    from .server.hosts import parse_host
    from .server.http import INSTANCE_HEADER, LOOPBACK_HOSTS, bind_tcp, create_app

    hosts: tuple[str, ...] = LOOPBACK_HOSTS
    if args.host not in LOOPBACK:
        # HTTP-28: local servers should bind to loopback; if you do not, accept requests that
        # name this host, and keep the Origin check (HTTP-27).
        print(f"warning: binding to {args.host}, not loopback (HTTP-28)", file=sys.stderr)
        hosts = (*LOOPBACK_HOSTS, f"[{args.host}]" if ":" in args.host else args.host)
    # The public names a deployment answers to (HTTP-27, HTTP-29): what Host and Origin carry.
    hosts = (*hosts, *args.allowed_host)
    for name in args.allowed_host:  # refused before anything is imported or bound
        if name != "*" and parse_host(name) is None:
            print(f"serve: --allowed-host {name!r} is not a host name or address", file=sys.stderr)
            return 2
    if "*" in args.allowed_host:
        print(
            "warning: --allowed-host '*' admits any Host and Origin (no DNS-rebinding defence)",
            file=sys.stderr,
        )
    if args.principal:
        print(
            "serve: --principal is for --stdio; over HTTP each request's credential names its "
            "principal (--principal-of, or MRTR_KIT_BEARER_TOKENS)",
            file=sys.stderr,
        )
        return 2
    if os.environ.get(ENV_PRINCIPAL):
        print(f"warning: {ENV_PRINCIPAL} is for --stdio; ignored over HTTP", file=sys.stderr)
    try:
        principal_of = _principal_of(args)
        tokens = None if principal_of else _bearer_tokens()
        if builder is None:
            server = _app_server(args)
        else:
            state = _example_options(args)
    except _Refused as exc:
        print(f"serve: {exc}", file=sys.stderr)
        return 2
    sock = bind_tcp(args.host, args.port)
    pages = None
    if builder is not None:
        # An example with pages of its own (url-login's sign-in page) is built with this
        # address, which its links must name; see _example_builder.
        base_url = _url(args.host, sock.getsockname()[1]).removesuffix("/mcp")
        built = builder.build(base_url, state)
        server, pages = (built, None) if builder.plain else (built.server, built)
    if args.trace:
        server.observer = trace_writer(args.trace)
    for line in fleet_warnings(args, server):
        print(f"warning: {line}", file=sys.stderr)
    if tokens is not None:
        principal_of = tokens
        print(f"bearer-token auth for {', '.join(tokens.principals)}", file=sys.stderr)
    elif principal_of is not None:
        print(f"authentication by --principal-of {args.principal_of}", file=sys.stderr)
    # A fleet's instances name themselves in every response (lesson 03 counts them).
    instance = {INSTANCE_HEADER: args.instance_name} if args.instance_name else None
    options: dict[str, Any] = {
        "allowed_hosts": hosts,
        "principal_of": principal_of,
        "response_headers": instance,
        "eras": _eras(args),
    }
    app = pages.app(**options) if pages else create_app(server, **options)
    what = f"app {args.app!r}" if args.app else f"example {args.example!r}"
    return _run(app, args, what, sock)


def _bearer_tokens() -> BearerTokens | None:
    """The token table in ``MRTR_KIT_BEARER_TOKENS`` (None when it is not set); a malformed one
    is refused before the port is bound, without showing any token."""
    from .server.auth import ENV_TOKENS, BearerTokens

    try:
        return BearerTokens.from_env()
    except ValueError as exc:
        raise _Refused(f"{ENV_TOKENS}: {exc}") from None


ENV_PRINCIPAL = "MRTR_KIT_PRINCIPAL"  # serve --stdio's principal, when --principal is not given


def _principal_of(args: argparse.Namespace) -> FromHeaders | None:
    """``--principal-of module:attribute``: the user's check of the request's headers (sync or
    async, returning the principal or None for 401), loaded like ``--app`` and wrapped in
    ``auth.FromHeaders``; None without the option (then ``MRTR_KIT_BEARER_TOKENS``, if set, is
    the table of tokens). Both at once are refused: two answers to "who is calling"."""
    import inspect

    from .server.auth import ENV_TOKENS, FromHeaders

    if args.principal_of is None:
        return None
    if os.environ.get(ENV_TOKENS, "").strip():
        raise _Refused(
            f"--principal-of and {ENV_TOKENS} both say who is calling; keep one (the token "
            "table is the default when --principal-of is not given)"
        )
    check = load_app(args.principal_of, "--principal-of")
    if not callable(check):
        raise _Refused(
            f"--principal-of {args.principal_of!r} names an object of type "
            f"{type(check).__name__}, not a callable"
        )
    try:
        inspect.signature(check).bind({})
    except TypeError:
        raise _Refused(
            f"--principal-of {args.principal_of!r} must take one argument: the request's headers"
        ) from None
    except ValueError:
        pass  # no signature to read (a builtin): the first request will say
    return FromHeaders(check, name=args.principal_of)


def fleet_warnings(args: argparse.Namespace, server: McpServer) -> list[str]:
    """What an instance that looks like one of a fleet (``--instance-name``, or a host that is
    not loopback) lacks to be one (KIT): a key only this process has (the other instances
    refuse its states) or a ledger in its memory (a state spent here can be spent again on
    another instance). Each line names the fix; ``serve`` prints them as warnings."""

    from .server.keyring import ENV_KEY, ENV_KEYS
    from .server.ledger import MemoryLedger

    if args.instance_name:
        why = f"--instance-name {args.instance_name}"
    elif args.host not in LOOPBACK:
        why = f"--host {args.host}"
    else:
        return []
    lines = []
    own_key = not (args.state_keys_file or os.environ.get(ENV_KEYS) or os.environ.get(ENV_KEY))
    if getattr(args, "gets_cli_keys", False) and own_key:
        lines.append(
            f"{why} looks like a fleet, but this process seals requestState with a key of its "
            "own: another instance refuses its states. Give every instance the same keys "
            f"({ENV_KEYS} or --state-keys-file)"
        )
    if isinstance(server.ledger, MemoryLedger):
        lines.append(
            f"{why} looks like a fleet, but the ledger is in this process's memory: a state "
            "spent here can be spent again on another instance. Give every instance the same "
            "--ledger sqlite:PATH (one machine) or redis://HOST:PORT/DB"
        )
    return lines


def _serve_stdio(args: argparse.Namespace, builder: ExampleBuilder | None) -> int:
    """``serve --stdio``: the same example server, codec and ledger, on stdin and stdout
    (``server/stdio.py``). stdout carries JSON-RPC lines only (STDIO-1): no banner; logs
    and every warning go to stderr, and so does anything a handler prints."""
    import logging
    import os

    from .server.stdio import serve_stdio

    if sys.__stdin__ is None or sys.__stdout__ is None:  # started with stdin or stdout closed
        print("serve --stdio: needs an open stdin and stdout", file=sys.stderr)
        return 2
    out = sys.__stdout__
    sys.stdout = sys.stderr  # a stray print() must not corrupt the stream (STDIO-1)
    level = args.log_level.upper()
    logging.basicConfig(
        stream=sys.stderr, level=level, format="%(levelname)s %(name)s: %(message)s"
    )
    if args.allowed_host or args.forwarded_allow_ips:
        print("serve --stdio: --allowed-host and --forwarded-allow-ips are for HTTP")
        return 2
    if builder is not None and not builder.plain:
        # Its pages (url-login's sign-in page) are served over HTTP beside /mcp; over stdio
        # there is nothing to visit.
        print(f"serve --stdio: {args.example} needs its HTTP pages; serve it over HTTP")
        return 2
    if args.principal_of:
        print("serve --stdio: --principal-of reads HTTP headers; over stdio use --principal NAME")
        return 2
    if os.environ.get("MRTR_KIT_BEARER_TOKENS"):
        # No credential crosses a pipe: the client that started this process is the user.
        print("serve --stdio: MRTR_KIT_BEARER_TOKENS is for HTTP; ignored over stdio")
    # Whoever started this process is the user: the option, else the environment, else none.
    principal = args.principal or os.environ.get(ENV_PRINCIPAL, "").strip() or None
    try:
        server = (
            _app_server(args) if builder is None else builder.build(None, _example_options(args))
        )
    except _Refused as exc:
        print(f"serve: {exc}")
        return 2
    if args.trace:
        server.observer = trace_writer(args.trace)
    what = f"app {args.app!r}" if args.app else f"example {args.example!r}"
    as_whom = f" as principal {principal!r}" if principal else " with no principal"
    logging.getLogger("mrtr_kit.stdio").info("serving %s on stdio%s", what, as_whom)
    try:
        run = serve_stdio(server, stdout_fd=out.fileno(), principal=principal, eras=_eras(args))
        asyncio.run(run)
    except KeyboardInterrupt:
        return 130
    return 0


def _eras(args: argparse.Namespace) -> Literal["modern", "both"]:
    """Both eras unless ``--modern-only`` (which keeps VER-5's -32022 for a 2025-11-25
    ``initialize``)."""
    return "modern" if args.modern_only else "both"


def trace_writer(path: str) -> Callable[[Any], None]:
    """An observer that appends each round as one JSON line to ``path``, flushed per line, so
    another process (a notebook) can read the rounds while the server runs."""
    out = open(path, "a", encoding="utf-8")  # noqa: SIM115 - open for the process's life

    def write(round_: Any) -> None:
        out.write(json.dumps(round_.to_json(), ensure_ascii=False) + "\n")
        out.flush()

    return write


class _Refused(Exception):
    """Why ``serve`` stops before serving: one line on stderr, status 2, no traceback."""


EXAMPLES_GROUP = "mrtr_kit.examples"  # the entry-point group the course registers under
COURSE_HINT = (
    "the examples come with the course: in a clone of mrtr-kit, `python3 tools/kit.py lab` "
    "installs it (or `pip install -e ./course`)"
)


class ExampleBuilder:
    """An example server registered in ``EXAMPLES_GROUP``: a builder called with the CLI's
    ``state_keys``, ``state_codec`` and ``ledger`` that returns an ``McpServer``. One whose
    first parameter is ``base_url`` serves pages of its own beside ``/mcp`` (url-login's
    sign-in page): it is given the address its links must name and returns an object with
    ``.server`` (the McpServer) and ``.app(**http_options)`` (the whole ASGI app)."""

    def __init__(self, name: str, build: Callable[..., Any]) -> None:
        import inspect

        self.name = name
        self._build = build
        first = next(iter(inspect.signature(build).parameters), None)
        self.plain = first != "base_url"

    def build(self, base_url: str | None, state: dict[str, Any]) -> Any:
        return self._build(**state) if self.plain else self._build(base_url, **state)


def example_entry_points() -> dict[str, Any]:
    """The examples installed, by name (their entry points, not yet loaded)."""
    from importlib.metadata import entry_points

    return {ep.name: ep for ep in entry_points(group=EXAMPLES_GROUP)}


def _example_builder(name: str) -> ExampleBuilder:
    found = example_entry_points()
    if name not in found:
        if not found:
            raise _Refused(f"--example {name!r}: no examples are installed; {COURSE_HINT}")
        raise _Refused(f"--example {name!r}: no such example; try {', '.join(sorted(found))}")
    return ExampleBuilder(name, found[name].load())


# Commands that moved to the course's command line with the course (``python -m mrtr_course``):
# the old spelling says where they are now instead of failing with argparse's usage.
MOVED = {
    "serve --legacy": "serve --legacy is the course's now: python -m mrtr_course serve --legacy "
    "--example trip-planner",
    "demo": "demo is the course's now: python -m mrtr_course demo",
}


def _state_keys(args: argparse.Namespace) -> KeyRing:
    """The requestState keys of ``serve``: ``--state-keys-file PATH``, else
    ``MRTR_KIT_STATE_KEYS`` / ``MRTR_KIT_STATE_KEY``, so every process of a fleet opens every
    other's states; without them, a fresh key whose states only this process opens.

    The file holds what ``MRTR_KIT_STATE_KEYS`` would (``k2:<secret>,k1:<secret>``, the first
    one seals); the keys may also be one per line, and a line starting with ``#`` is a
    comment. A missing, unreadable or malformed file is refused (the secrets are never shown).
    """
    from .server.keyring import KeyRing

    path = args.state_keys_file
    if path is None:
        try:
            return KeyRing.from_env() or KeyRing.generate()
        except ValueError as exc:
            raise _Refused(f"MRTR_KIT_STATE_KEYS / MRTR_KIT_STATE_KEY: {exc}") from None
    try:
        with open(path, encoding="utf-8") as file:
            lines = [line.strip() for line in file]
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not UTF-8 text"
        raise _Refused(f"--state-keys-file {path}: {reason}") from None
    spec = ",".join(line for line in lines if line and not line.startswith("#"))
    if not spec:
        raise _Refused(f"--state-keys-file {path}: no keys in it (kid:secret,...)")
    try:
        return KeyRing.parse(spec)
    except ValueError as exc:
        raise _Refused(f"--state-keys-file {path}: {exc}") from None


def _example_state(args: argparse.Namespace) -> dict[str, Any]:
    """The keyword arguments an example's builder (or an ``--app`` factory) is called with:
    the keys, ``--state-codec`` and the ``--ledger`` opened (shared by a fleet: spent states,
    MRTR-S5d, and the examples' business records). A missing extra (redis-py for a
    ``redis://`` ledger) or a Redis that would forget spends on restart is refused here."""
    from .server.codecs import DEFAULT_CODEC
    from .server.ledger import LedgerUnavailable, open_ledger

    keys = _state_keys(args)
    args.gets_cli_keys = True  # for fleet_warnings: the server seals with the CLI's keys
    try:
        ledger = open_ledger(
            args.ledger or "memory",
            timeout_s=args.ledger_timeout,
            allow_volatile=args.allow_volatile_ledger,
        )
    except (ValueError, LedgerUnavailable) as exc:
        raise _Refused(str(exc)) from None
    return {"state_keys": keys, "state_codec": args.state_codec or DEFAULT_CODEC, "ledger": ledger}


STATE_OPTIONS = ("state_keys", "state_codec", "ledger")
SKEW_OPTION = "clock_skew_s"  # McpServer's keyword that --clock-skew fills


def _example_options(args: argparse.Namespace) -> dict[str, Any]:
    """What an example's builder is called with: ``_example_state``, and ``clock_skew_s`` when
    ``--clock-skew`` is given (every example passes its options on to ``McpServer``)."""
    options = _example_state(args)
    if args.clock_skew is not None:
        options[SKEW_OPTION] = args.clock_skew
    return options


def load_app(spec: str, option: str = "--app") -> Any:
    """The object ``module:attribute`` names, imported like ``uvicorn module:app`` does: the
    current folder first on ``sys.path``; ``attribute`` may be dotted (``pkg.mod:obj.server``).
    A malformed spec, a module that is not there or a missing attribute is ``_Refused``; an
    exception raised inside the module itself is the module's own, and keeps its traceback.
    ``option`` names the option in those messages (``--app``, ``--principal-of``)."""
    import importlib
    import os

    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name.strip() or not attribute.strip():
        raise _Refused(f"{option} {spec!r}: write it module:attribute, e.g. myserver:server")
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    try:
        target: Any = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if missing and (module_name == missing or module_name.startswith(missing + ".")):
            raise _Refused(
                f"{option} {spec!r}: no module named {missing!r} (looked in {cwd})"
            ) from None
        raise
    for part in attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise _Refused(
                f"{option} {spec!r}: module {module_name!r} has no attribute {attribute!r}"
            ) from None
    return target


def _app_server(args: argparse.Namespace) -> McpServer:
    """The ``McpServer`` that ``--app module:attribute`` names: the object itself, served as it
    was built (its own keys, codec and ledger); or what a callable returns. A callable that
    takes ``state_keys``, ``state_codec`` and ``ledger`` keywords (like the examples'
    builders) is called with the CLI's (``--state-keys-file`` or ``MRTR_KIT_STATE_KEYS``,
    ``--state-codec``, ``--ledger``); one that takes ``clock_skew_s`` gets ``--clock-skew``
    when it is given; any other is called with no arguments. Those options given to a server
    that would not receive them are refused, never silently ignored."""
    import inspect

    from .server.core import McpServer

    target = load_app(args.app)
    given = [
        flag
        for flag, value in (
            ("--state-keys-file", args.state_keys_file),
            ("--state-codec", args.state_codec),
            ("--ledger", args.ledger),
        )
        if value is not None
    ]
    skew = args.clock_skew
    if isinstance(target, McpServer):
        if given or skew is not None:
            flags = [*given, *(["--clock-skew"] if skew is not None else [])]
            raise _Refused(
                f"--app {args.app!r} is an McpServer built with its own keys, codec, ledger and "
                f"clock skew; {', '.join(flags)} cannot change them (name a factory taking "
                f"{', '.join(STATE_OPTIONS)} or {SKEW_OPTION} instead)"
            )
        return target
    if not callable(target):
        raise _Refused(
            f"--app {args.app!r} names an object of type {type(target).__name__}, "
            "not an McpServer or a callable returning one"
        )
    try:
        params = inspect.signature(target).parameters.values()
    except (TypeError, ValueError):
        params = ()  # nothing to read: called with no arguments
    names = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    any_keyword = any(p.kind is p.VAR_KEYWORD for p in params)
    takes_state = set(STATE_OPTIONS) <= names or any_keyword
    if given and not takes_state:
        raise _Refused(
            f"--app {args.app!r} takes no {', '.join(STATE_OPTIONS)} keywords; "
            f"{', '.join(given)} would not reach its server"
        )
    if skew is not None and not (SKEW_OPTION in names or any_keyword):
        # Never silently ignored: the operator asked for an expiry the server would not keep.
        raise _Refused(
            f"--app {args.app!r} takes no {SKEW_OPTION} keyword; --clock-skew would not reach "
            "its server"
        )
    keywords: dict[str, Any] = {}
    if skew is not None:
        keywords[SKEW_OPTION] = skew
    probe = {**keywords, **(dict.fromkeys(STATE_OPTIONS) if takes_state else {})}
    try:
        inspect.signature(target).bind(**probe)
    except TypeError:
        raise _Refused(
            f"--app {args.app!r} needs arguments; name an McpServer, a callable with none, "
            f"or one taking {', '.join(STATE_OPTIONS)} (and {SKEW_OPTION})"
        ) from None
    except ValueError:
        pass  # no signature to check (a builtin): let the call say
    if takes_state:
        keywords.update(_example_state(args))
    server = target(**keywords)
    if not isinstance(server, McpServer):
        raise _Refused(
            f"--app {args.app!r} returned an object of type {type(server).__name__}, "
            "not an McpServer"
        )
    return server


def _run(app: Any, args: argparse.Namespace, what: str, sock: socket.socket | None = None) -> int:
    from .server.http import bind_tcp, run_announced, uvicorn_config

    sock = sock or bind_tcp(args.host, args.port)
    proxy: dict[str, Any] = {}
    if getattr(args, "forwarded_allow_ips", None):
        # uvicorn's own settings: X-Forwarded-For / -Proto from these addresses set the client
        # address and scheme (its access log). X-Forwarded-Host is never read: the Host check
        # (HTTP-27, HTTP-29) is on the Host header the proxy sends, named by --allowed-host.
        proxy = {"proxy_headers": True, "forwarded_allow_ips": args.forwarded_allow_ips}
    config = uvicorn_config(app, log_level=args.log_level, **proxy)  # the kit's limits
    run_announced(config, sock, f"Serving {what} at {_url(args.host, sock.getsockname()[1])}")
    return 0


def cmd_examples(args: argparse.Namespace) -> int:
    found = example_entry_points()
    if not found:
        print(f"no examples are installed; {COURSE_HINT}")
        return 0
    for name in sorted(found):
        build = found[name].load()
        module = sys.modules[build.__module__]
        summary = (module.__doc__ or "").strip().splitlines()[0]
        print(f"{name:20} {summary}")
    return 0


def cmd_ledger_init(args: argparse.Namespace) -> int:
    """``ledger init sqlite:PATH``: create the SQLite ledger file ``serve --ledger`` opens; the
    one way a ledger file comes to exist (``serve`` never creates one, KIT). Not idempotent, on
    purpose: on a file that is a ledger already it changes nothing and exits with status 1, so
    an ``init`` left in a start-up script fails loudly instead of quietly recreating a deleted
    ledger empty at every boot. Run it once, when the machine is provisioned."""
    from .server.ledger import LedgerRefused
    from .server.ledger.sqlite import SqliteLedger

    spec = args.spec
    if not spec.startswith("sqlite:") or not spec.removeprefix("sqlite:"):
        kind = "Redis" if spec.startswith(("redis://", "rediss://", "unix://")) else None
        why = f"a {kind} ledger needs no init" if kind else "write it sqlite:PATH"
        print(f"ledger init {spec}: {why}", file=sys.stderr)
        return 2
    path = spec.removeprefix("sqlite:")
    try:
        SqliteLedger(path)  # opens only what is a ledger already
    except LedgerRefused:
        pass
    else:
        print(f"ledger init: {path} is a ledger already; nothing changed", file=sys.stderr)
        return 1
    try:
        ledger = SqliteLedger(path, create=True)
    except LedgerRefused as exc:
        print(f"ledger init: {exc}", file=sys.stderr)
        return 2
    asyncio.run(ledger.aclose())
    print(f"created the SQLite ledger {path}")
    return 0


def cmd_conformance_client(args: argparse.Namespace) -> int:
    from .client.conformance_client import main as conformance_main  # imported only when used

    # Like sys.argv: a program name first; the harness appends the server URL last (§7.1).
    return conformance_main(["mrtr-kit conformance-client", *args.args])


# -- parser ------------------------------------------------------------------------------------


# What a command line built on this one adds: given ``serve``'s parser and the subparsers, it
# adds its options and commands and returns the names of the commands it added.
Extension = Callable[[argparse.ArgumentParser, Any], set[str]]


def _whole_seconds(text: str) -> int:
    """``--clock-skew``: a whole number of seconds, 0 or more (argparse's type)."""
    try:
        seconds = int(text)
    except ValueError:
        seconds = -1
    if seconds < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of seconds >= 0")
    return seconds


def build_parser(extend: Extension | None = None) -> argparse.ArgumentParser:
    """The ``mrtr-kit`` parser; ``extend`` adds another program's options and commands (the
    course's ``python -m mrtr_course`` adds ``serve --legacy`` and ``demo``)."""
    from .server.ledger import LEDGER_TIMEOUT_S
    from .server.state import CLOCK_SKEW_S

    parser = argparse.ArgumentParser(
        prog="mrtr-kit", description="MCP 2026-07-28 Multi Round-Trip Requests: servers and demos."
    )
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser(
        "serve",
        help="serve an example, or your own McpServer (--app), over Streamable HTTP at /mcp, "
        "or over stdio (--stdio)",
    )
    what = serve.add_mutually_exclusive_group()
    what.add_argument(
        "--example",
        metavar="NAME",
        help="an example the course registers (`examples` lists them); default lessons",
    )
    what.add_argument(
        "--app",
        metavar="MODULE:ATTRIBUTE",
        help="your own server, like `uvicorn module:app` (the current folder is on sys.path): "
        "an McpServer, served as built (its own keys, codec and ledger; --state-keys-file, "
        "--state-codec and --ledger are then refused), or a callable returning one: called "
        "with state_keys=, state_codec=, ledger= from those options (and MRTR_KIT_STATE_KEYS) "
        "if it takes those keywords, else with no arguments",
    )
    serve.add_argument(
        "--stdio",
        action="store_true",
        help="serve on stdin/stdout (newline-delimited JSON-RPC) instead of HTTP",
    )
    serve.add_argument(
        "--modern-only",
        action="store_true",
        help="serve 2026-07-28 clients only: a 2025-11-25 initialize gets -32022 naming the "
        "supported versions (VER-5); by default both eras are served, the first request "
        "deciding each client's",
    )
    serve.add_argument("--host", default="127.0.0.1", help="default 127.0.0.1 (HTTP-28)")
    serve.add_argument("--port", type=int, default=DEFAULT_PORT, help="0 picks a free port")
    serve.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a public name this server answers to, accepted in Host and Origin besides the "
        "loopback ones (HTTP-27, HTTP-29; repeatable); behind a proxy, the name in the Host "
        "header the proxy sends (X-Forwarded-Host is not read)",
    )
    serve.add_argument(
        "--forwarded-allow-ips",
        metavar="IP[,IP]",
        help="trust X-Forwarded-For/-Proto from these proxy addresses (uvicorn's "
        "proxy_headers and forwarded_allow_ips; off by default)",
    )
    serve.add_argument(
        "--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"]
    )
    serve.add_argument(
        "--state-codec",
        choices=["hmac", "aead"],
        help="how requestState is sealed: aead (AES-256-GCM: clients can neither edit nor read "
        "it; the default, McpServer's) or hmac (tamper-proof, but readable by any client)",
    )
    serve.add_argument(
        "--state-keys-file",
        metavar="PATH",
        help="requestState keys as in MRTR_KIT_STATE_KEYS (kid:secret,..., or one per line; "
        "the first seals), instead of the environment",
    )
    serve.add_argument(
        "--ledger",
        help="memory (default), sqlite:PATH (a file `mrtr-kit ledger init sqlite:PATH` "
        "created: a missing one is refused) or redis://HOST:PORT/DB "
        "(needs pip install 'mrtr-kit[redis]')",
    )
    serve.add_argument(
        "--ledger-timeout",
        type=float,
        default=LEDGER_TIMEOUT_S,
        help=f"seconds a ledger write may take before the request gets -31000, try again "
        f"later (default {LEDGER_TIMEOUT_S:g})",
    )
    serve.add_argument(
        "--clock-skew",
        type=_whole_seconds,
        metavar="SECONDS",
        help="how far apart the clocks of the instances sharing the keys may be: a "
        "requestState is accepted up to its TTL plus this, and refused after, to the second "
        f"(McpServer(clock_skew_s=...); default {CLOCK_SKEW_S}, 0 for one instance). For an "
        "example, or an --app factory taking a clock_skew_s keyword; refused for any other "
        "--app",
    )
    serve.add_argument(
        "--allow-volatile-ledger",
        action="store_true",
        help="accept a Redis ledger that keeps nothing across a restart (throw-away demos only)",
    )
    serve.add_argument(
        "--principal-of",
        metavar="MODULE:ATTRIBUTE",
        help="your own authentication over HTTP, loaded like --app: a sync or async callable "
        "given the request's headers (a case-insensitive mapping) that returns the principal "
        "(a str: what requestState is bound to) or None to refuse with 401; raising refuses "
        "too. Instead of the default, the token table in MRTR_KIT_BEARER_TOKENS "
        "(name:token,...), which it cannot be combined with",
    )
    serve.add_argument(
        "--principal",
        metavar="NAME",
        help=f"with --stdio: the principal of every request (the user who started this "
        f"process; default ${ENV_PRINCIPAL}, else none). HTTP takes it from each request's "
        "credential instead",
    )
    serve.add_argument(
        "--instance-name", help="name this process in an X-Mcp-Instance response header"
    )
    serve.add_argument(
        "--trace",
        metavar="PATH",
        help="append the server's view of each round to PATH, one JSON line per request",
    )
    serve.set_defaults(func=cmd_serve)
    added = extend(serve, sub) if extend is not None else set()

    examples = sub.add_parser("examples", help="list the example servers")
    examples.set_defaults(func=cmd_examples)

    if "demo" not in added:  # listed in --help, answered by main() (MOVED)
        sub.add_parser("demo", help="moved: python -m mrtr_course demo")

    ledger = sub.add_parser(
        "ledger",
        help="ledger init sqlite:PATH: create the SQLite ledger file serve --ledger opens",
    )
    ledger_sub = ledger.add_subparsers(dest="ledger_command", required=True)
    init = ledger_sub.add_parser(
        "init",
        help="create a SQLite ledger file (serve never creates one: a deleted ledger must not "
        "come back empty); status 1 if it is a ledger already (nothing changed)",
        description="Create the SQLite ledger file that serve --ledger sqlite:PATH opens. "
        "serve refuses a missing file rather than create one: a ledger deleted under a fleet "
        "and recreated empty would accept a replay of every state it had spent. Run this "
        "once, when the machine is provisioned, not in a start-up script: on a file that is "
        "a ledger already it changes nothing and exits with status 1.",
    )
    init.add_argument("spec", metavar="sqlite:PATH")
    init.set_defaults(func=cmd_ledger_init)

    client = sub.add_parser(
        "conformance-client", help="the client for the conformance suite (URL comes last)"
    )
    client.add_argument("args", nargs=argparse.REMAINDER, help="the server URL")
    client.set_defaults(func=cmd_conformance_client)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    # The course's command and option now (MOVED): said before argparse would refuse their
    # arguments with its usage text.
    if words[:1] == ["demo"]:
        print(MOVED["demo"], file=sys.stderr)
        return 2
    if words[:1] == ["serve"] and "--legacy" in words:
        print(MOVED["serve --legacy"], file=sys.stderr)
        return 2
    args = build_parser().parse_args(words)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
