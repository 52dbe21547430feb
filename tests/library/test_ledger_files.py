"""A SQLite ledger is never silently empty (KIT, issue 30 item 2), and ``serve``'s start-up
errors and warnings about it (item 6).

* The file is created by an explicit step only: ``SqliteLedger(path, create=True)`` or
  ``mrtr-kit ledger init sqlite:PATH``. A missing file, a missing folder, a file that is not a
  database or not a ledger is ``LedgerRefused``, and ``serve`` says it in one line, status 2.
* A running instance whose file is unlinked or replaced (renamed over) answers -31000 (KIT-ERR-A)
  before its next spend, instead of spending into a file nobody else sees.
* A fleet-looking instance with a key of its own or the in-memory ledger warns, naming the fix.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
import sys

import httpx
import pytest

from mrtr_kit.__main__ import _app_server, build_parser, fleet_warnings, main
from mrtr_kit.server import McpServer
from mrtr_kit.server.ledger import LedgerRefused, LedgerUnavailable, open_ledger
from mrtr_kit.server.ledger.sqlite import SqliteLedger
from tests.helpers import headers, new_sqlite_ledger, request, start_serve, stop_serve

FAR = 4_000_000_000.0  # an expiry no test reaches

APP = """
from mrtr_kit.server import McpServer

paid = []


def build(state_keys, state_codec, ledger):
    server = McpServer("payer", state_keys=state_keys, state_codec=state_codec, ledger=ledger)

    @server.tool(description="asks, then pays once per approval")
    async def pay(ctx):
        if ctx.state is None:
            schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
            form = {"mode": "form", "message": "Pay?", "requestedSchema": schema}
            return ctx.input_required(
                {"ok": {"method": "elicitation/create", "params": form}}, state={"at": "ok"}
            )
        await ctx.redeem_once()
        return "paid"

    return server
"""


def refused(make) -> str:
    with pytest.raises(LedgerRefused) as caught:
        make()
    message = str(caught.value)
    assert "\n" not in message  # one line, for serve's stderr
    return message


def test_a_missing_file_is_refused_not_created(tmp_path):
    """KIT: the class, ``open_ledger`` and so ``serve`` never create a ledger by themselves."""
    path = tmp_path / "ledger.db"
    message = refused(lambda: SqliteLedger(path))
    assert f"mrtr-kit ledger init sqlite:{path}" in message
    refused(lambda: open_ledger(f"sqlite:{path}"))
    assert not path.exists()
    ledger = SqliteLedger(path, create=True)  # the explicit step
    asyncio.run(ledger.aclose())
    asyncio.run(SqliteLedger(path).aclose())  # and now it opens


@pytest.mark.parametrize(
    "case", ["no folder", "a file as folder", "not a database", "empty file", "other tables"]
)
def test_what_is_not_a_ledger_is_refused_in_one_line(tmp_path, case):
    path = tmp_path / "ledger.db"
    if case == "no folder":
        path = tmp_path / "nowhere" / "ledger.db"
    elif case == "a file as folder":
        (tmp_path / "plain").write_text("a file")
        path = tmp_path / "plain" / "ledger.db"
    elif case == "not a database":
        path.write_text("this is a text file, not SQLite\n" * 20)
    elif case == "empty file":
        path.touch()
    else:
        with sqlite3.connect(path) as db:
            db.execute("CREATE TABLE invoices (n INTEGER)")
    before = path.read_bytes() if path.exists() else None
    message = refused(lambda: SqliteLedger(path))
    expected = {
        "no folder": "does not exist",
        "a file as folder": "is not a folder",
        "not a database": "not a database",
        "empty file": "is empty, not a ledger yet",
        "other tables": "holds other tables",
    }[case]
    assert expected in message
    if case != "empty file":  # create=True makes an empty file a ledger; nothing else
        refused(lambda: SqliteLedger(path, create=True))
    assert (path.read_bytes() if path.exists() else None) == before  # nothing was written


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write any file")
def test_a_file_this_user_may_not_write_is_refused(tmp_path):
    path = tmp_path / "ledger.db"
    asyncio.run(SqliteLedger(path, create=True).aclose())
    path.chmod(0o400)
    assert "readonly" in refused(lambda: SqliteLedger(path))


def test_a_ledger_from_an_older_kit_gains_the_new_tables(tmp_path):
    """0.1.0's files have ``spent`` only: still ledgers, upgraded in place, not refused."""
    path = tmp_path / "ledger.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE spent (token_id TEXT PRIMARY KEY, expires_at REAL NOT NULL)")
    ledger = SqliteLedger(path)
    assert asyncio.run(ledger.flow_count("f", "otp")) == 1
    asyncio.run(ledger.aclose())


@pytest.mark.parametrize("how", ["deleted", "replaced"])
def test_a_running_ledger_whose_file_goes_away_refuses_to_spend(tmp_path, how):
    """KIT-ERR-A: the path no longer names the opened file (device and inode): every call is
    ``LedgerUnavailable``, spent nowhere, reads included."""
    path = tmp_path / "ledger.db"

    async def scenario():
        ledger = SqliteLedger(path, create=True)
        try:
            assert await ledger.spend("before", FAR)
            if how == "deleted":
                for name in ("ledger.db", "ledger.db-wal", "ledger.db-shm"):
                    (tmp_path / name).unlink(missing_ok=True)
            else:  # a fresh ledger renamed over the old one (mv, an atomic restore)
                other = tmp_path / "other.db"
                await SqliteLedger(other, create=True).aclose()
                os.replace(other, path)
            with pytest.raises(LedgerUnavailable, match=how):
                await ledger.spend("after", FAR)
            with pytest.raises(LedgerUnavailable):
                await ledger.record("payout", "A-1")
        finally:
            await ledger.aclose()

    asyncio.run(scenario())


# -- the command line --------------------------------------------------------------------------


def test_ledger_init_creates_once_and_refuses_what_it_cannot(tmp_path, capsys):
    """``ledger init`` is not idempotent on purpose (KIT): a second run changes nothing and
    says so with status 1, so it cannot sit unnoticed in a start-up script."""
    path = tmp_path / "ledger.db"
    assert main(["ledger", "init", f"sqlite:{path}"]) == 0
    assert capsys.readouterr().out == f"created the SQLite ledger {path}\n"
    size = path.stat().st_size
    assert main(["ledger", "init", f"sqlite:{path}"]) == 1
    assert capsys.readouterr().err == f"ledger init: {path} is a ledger already; nothing changed\n"
    assert path.stat().st_size == size
    assert main(["ledger", "init", f"sqlite:{tmp_path / 'no' / 'x.db'}"]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["ledger", "init", "redis://127.0.0.1:6379/0"]) == 2
    assert "needs no init" in capsys.readouterr().err
    assert main(["ledger", "init", "sqlite:"]) == 2


@pytest.mark.slow  # a real serve process
@pytest.mark.parametrize("case", ["missing", "no folder", "not a database"])
def test_serve_refuses_an_unusable_sqlite_ledger_in_one_line_status_2(tmp_path, case):
    """Item 6: one line on stderr, status 2, no traceback; a missing file names the command
    that creates it. A real process, so what an operator sees is what is checked."""
    (tmp_path / "payer.py").write_text(APP)
    path = {
        "missing": tmp_path / "ledger.db",
        "no folder": tmp_path / "nowhere" / "ledger.db",
        "not a database": tmp_path / "notes.txt",
    }[case]
    if case == "not a database":
        path.write_text("not SQLite\n" * 100)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mrtr_kit",
            "serve",
            "--app",
            "payer:build",
            "--ledger",
            f"sqlite:{path}",
            "--port",
            "0",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith(f"serve: SQLite ledger {path}")
    if case == "missing":
        assert f"mrtr-kit ledger init sqlite:{path}" in done.stderr
        assert not path.exists()


@pytest.mark.slow  # a real serve process
def test_a_running_serve_answers_31000_once_its_ledger_file_is_deleted(tmp_path):
    """The engineer's case (issue 30 item 2): the ledger deleted under a running instance.
    Before: it kept spending into the lost file. Now: 503, -31000, and nothing paid."""
    (tmp_path / "payer.py").write_text(APP)
    spec = new_sqlite_ledger(tmp_path / "ledger.db")
    proc, url = start_serve(tmp_path, "--app", "payer:build", "--ledger", spec)
    try:
        caps = {"elicitation": {"form": {}}}
        hdrs = headers("tools/call", "pay")
        with httpx.Client(timeout=30) as http:

            def call(**extra):
                params = {"name": "pay", "arguments": {}, **extra}
                body = request("tools/call", params, capabilities=caps)
                return http.post(url, json=body, headers=hdrs)

            asked = call().json()["result"]
            answers = {"ok": {"action": "accept", "content": {"ok": True}}}
            retry = {"requestState": asked["requestState"], "inputResponses": answers}
            second = call().json()["result"]
            assert call(**retry).json()["result"]["content"][0]["text"] == "paid"
            for name in ("ledger.db", "ledger.db-wal", "ledger.db-shm"):
                (tmp_path / name).unlink(missing_ok=True)
            lost = call(requestState=second["requestState"], inputResponses=answers)
    finally:
        log = stop_serve(proc)
    assert lost.status_code == 503
    assert lost.json()["error"]["code"] == -31000
    assert "was deleted since this process opened it" in log


def test_fleet_looking_instances_warn_and_name_the_fix(tmp_path, monkeypatch):
    """Item 6: ``--instance-name`` or a non-loopback host, with a per-process key or the
    in-memory ledger, warns; with shared keys and a shared ledger, or on loopback, nothing."""
    (tmp_path / "payer.py").write_text(APP)
    (tmp_path / "keys").write_text("k1:" + "A" * 43 + "\n")
    monkeypatch.chdir(tmp_path)
    for name in ("MRTR_KIT_STATE_KEYS", "MRTR_KIT_STATE_KEY"):
        monkeypatch.delenv(name, raising=False)

    def warnings(*argv: str) -> list[str]:
        args = build_parser().parse_args(["serve", "--app", "payer:build", *argv])
        return fleet_warnings(args, _app_server(args))

    both = warnings("--instance-name", "a")
    assert len(both) == 2
    assert "MRTR_KIT_STATE_KEYS or --state-keys-file" in both[0]
    assert "--ledger sqlite:PATH (one machine) or redis://HOST:PORT/DB" in both[1]
    assert len(warnings("--host", "10.0.0.5")) == 2
    assert warnings() == []  # one loopback instance: a key of its own is right
    spec = new_sqlite_ledger(tmp_path / "ledger.db")
    assert warnings("--instance-name", "a", "--state-keys-file", "keys", "--ledger", spec) == []
    [memory] = warnings("--instance-name", "a", "--state-keys-file", "keys")
    assert "in this process's memory" in memory
    monkeypatch.setenv("MRTR_KIT_STATE_KEYS", "k1:" + "B" * 43)
    assert warnings("--instance-name", "a", "--ledger", spec) == []


def test_an_mcpserver_app_with_a_memory_ledger_warns_too(tmp_path, monkeypatch):
    """A server built with its own keys: only its ledger can be seen, and is."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "plain.py").write_text(
        "from mrtr_kit.server import KeyRing, McpServer\n"
        "server = McpServer('p', state_keys=KeyRing.generate())\n"
    )
    args = build_parser().parse_args(["serve", "--app", "plain:server", "--instance-name", "b"])
    server = _app_server(args)
    assert isinstance(server, McpServer)
    [line] = fleet_warnings(args, server)
    assert line.startswith("--instance-name b looks like a fleet") and "memory" in line


def test_a_relative_path_is_checked_where_it_was_opened(tmp_path, monkeypatch):
    """The file check names the file opened, not whatever the same relative path names after
    the process changes folder: no false -31000."""
    monkeypatch.chdir(tmp_path)
    ledger = SqliteLedger("ledger.db", create=True)
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert asyncio.run(ledger.spend("jti", FAR))
    asyncio.run(ledger.aclose())
