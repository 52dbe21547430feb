"""The course's command line: ``python -m mrtr_course`` — the library's (``python -m
mrtr_kit``) and what only the lessons need:

* ``serve --legacy --example NAME`` — an example's 2025-11-25 push-style original, for the
  migration lesson (03); loopback only. ``--sessions shared|local`` and ``--answer-timeout``
  belong to it;
* ``demo [--city Paris] [--verbose]`` — the basic MRTR flow in the terminal: the weather tool
  asks for your login, you answer at the prompt, and each round is shown in one line (method,
  id, answers, resultType, what is asked, requestState length); ``--verbose`` prints every
  request and response in full.

Every other command and option is the library's, unchanged (``mrtr_kit/__main__.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable, Sequence
from typing import Any

from mrtr_kit import __main__ as library


def cmd_serve(args: argparse.Namespace) -> int:
    """``serve``: the library's, or with ``--legacy`` the 2025-11-25 original (``serve_legacy``)."""
    if not args.legacy:
        return library.cmd_serve(args)
    if args.app:
        print("serve: --legacy serves the course's 2025-11-25 examples, not --app", file=sys.stderr)
        return 2
    if args.stdio:
        print("serve: the 2025-11-25 servers are HTTP-only: --legacy or --stdio", file=sys.stderr)
        return 2
    return serve_legacy(args)


def serve_legacy(args: argparse.Namespace) -> int:
    """``serve --legacy``: the 2025-11-25 original of an example, for the migration lesson."""
    from mrtr_course.examples import LEGACY_EXAMPLES
    from mrtr_course.legacy.http import configure_logging, create_legacy_app

    args.example = args.example or "trip-planner"
    if args.trace:
        print("--trace records 2026-07-28 rounds; the legacy server has none", file=sys.stderr)
        return 2
    if args.example not in LEGACY_EXAMPLES:
        print(f"no 2025-11-25 version of {args.example!r}; try {sorted(LEGACY_EXAMPLES)}")
        return 2
    if args.host not in library.LOOPBACK:
        print("the legacy server is for the lesson only: it serves loopback only", file=sys.stderr)
        return 2
    server = LEGACY_EXAMPLES[args.example](
        shared_sessions=args.sessions == "shared", answer_timeout_s=args.answer_timeout
    )
    configure_logging()
    app = create_legacy_app(server, instance=args.instance_name or "legacy")
    return library._run(app, args, f"the 2025-11-25 version of {args.example!r}")


# -- demo --------------------------------------------------------------------------------------


def _keys(mapping: Any) -> str:
    return ", ".join(mapping) if isinstance(mapping, dict) and mapping else "none"


def _state(value: Any) -> str:
    return f"{len(value)} chars" if isinstance(value, str) else "none"


def round_line(record: Any) -> str:
    """One round in one line: method, id, what was answered and the state sent -> resultType,
    what is asked next and the new state's length (its contents are the server's business)."""
    params = record.request.get("params") or {}
    sent = (
        f"round {record.round}: {record.method} id={record.request.get('id')}, "
        f"answers: {_keys(params.get('inputResponses'))}, "
        f"requestState: {_state(params.get('requestState'))}"
    )
    response = record.response or {}
    if "error" in response:
        error = response["error"] or {}
        return f"{sent} -> error {error.get('code')}: {error.get('message')}"
    result = response.get("result") or {}
    kind = result.get("resultType", "complete")
    if kind != "input_required":
        return f"{sent} -> {kind}"
    return (
        f"{sent} -> {kind}, asks: {_keys(result.get('inputRequests'))}, "
        f"requestState: {_state(result.get('requestState'))}"
    )


def _show_round(record: Any, write: Callable[[str], Any], verbose: bool) -> None:
    if not verbose:
        write(round_line(record))
        return
    write(f"\n--- round {record.round}: {record.method} -> HTTP {record.http_status}")
    write("request:")
    write(json.dumps(record.request, indent=2, ensure_ascii=False))
    write("response:")
    write(json.dumps(record.response, indent=2, ensure_ascii=False))


async def run_demo(
    city: str, read: Callable[[str], str], write: Callable[[str], Any], *, verbose: bool = False
) -> int:
    """Call ``get_weather`` round by round against the weather example, in this process.

    One line per round by default (``round_line``); ``verbose`` prints every request and
    response in full."""
    from mrtr_course.console import ConsoleForm
    from mrtr_course.examples import weather
    from mrtr_kit.client import AnswerThese, GiveUp, McpClient, McpClientError
    from mrtr_kit.server.http import create_app

    app = create_app(weather.build_server())
    write(f"The weather example runs in this process; calling get_weather for {city!r}.")
    if not verbose:
        write("One line per round (add --verbose for the full JSON of each request and response).")
    async with McpClient.for_app(app, elicitation=ConsoleForm(read, write)) as client:
        try:
            call = await client.begin_tool_call("get_weather", {"city": city})
            _show_round(client.trace[-1], write, verbose)
            # The sans-IO call says what to do next (client/call.py); this loop only does it.
            step = await client.retry_state_only(call)
            while isinstance(step, AnswerThese):
                answers = {  # MRTR-C1: every question answered before the retry
                    q.key: await client.handlers.answer(q.request, q.context)
                    for q in step.questions
                }
                await client.continue_call(call, answers)  # new id, state echoed
                _show_round(client.trace[-1], write, verbose)
                step = await client.retry_state_only(call)
            if isinstance(step, GiveUp):
                raise step.error
        except McpClientError as exc:
            write(f"\nThe call stopped: {exc}")
            return 1
    assert call.result is not None
    texts = [b.get("text", "") for b in call.result.get("content", []) if b.get("type") == "text"]
    write(f"\nResult after {call.rounds} round(s): {' '.join(texts)}")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from mrtr_course.console import stdin_reader

    return asyncio.run(run_demo(args.city, stdin_reader(), print, verbose=args.verbose))


# -- parser ------------------------------------------------------------------------------------


def add_course_commands(serve: argparse.ArgumentParser, sub: Any) -> set[str]:
    """``serve``'s legacy options and the ``demo`` command, on the library's parser."""
    legacy = serve.add_argument_group("2025-11-25 servers (lesson 03: migrating)")
    legacy.add_argument(
        "--legacy", action="store_true", help="serve the example's 2025-11-25 push-style version"
    )
    legacy.add_argument(
        "--sessions",
        choices=["shared", "local"],
        default="shared",
        help="shared: session ids signed with MRTR_KIT_STATE_KEY, valid on every instance",
    )
    legacy.add_argument(
        "--answer-timeout", type=float, default=300.0, help="seconds a tool waits for an answer"
    )
    serve.set_defaults(func=cmd_serve)
    demo = sub.add_parser("demo", help="the weather login flow in the terminal")
    demo.add_argument("--city", default="Paris")
    demo.add_argument(
        "--verbose", action="store_true", help="print each round's request and response in full"
    )
    demo.set_defaults(func=cmd_demo)
    return {"demo"}


def build_parser() -> argparse.ArgumentParser:
    """The library's parser with the course's options and commands."""
    parser = library.build_parser(add_course_commands)
    parser.prog = "python -m mrtr_course"
    parser.description = "The MRTR course's servers and demos, and every library command."
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
