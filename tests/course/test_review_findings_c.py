"""Findings of the December 2026 pedagogy and newcomer reviews in lessons 00, 01, 02, 02b and 05,
the README and tools/kit.py, one test each, named after the finding (issue 31, items 3 and 7).
M3 (quiz 02.5, now 02a.2) moved with lesson 02's replays to tests/course/test_lesson_02a.py.

Each test failed on the text or code as it was before the fix: ``test_m3_...`` is the
pedagogy review's M3, ``test_newcomer_broken_3_...`` the newcomer's broken moment 3, and so on.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import threading
import types
from pathlib import Path

import lesson01_checkpoints
import lesson02b_checkpoints
import lesson02b_spend
import pytest

from tests.course.lesson_quizzes import QUIZZES
from tests.lesson_files import LESSON_GLOB, LESSONS, ROOT, run_cell, run_cell_in_loop
from tests.test_spec_map import cited_ids

SPEC_MAP = ROOT / "docs" / "spec-map.md"


def cells(lesson: str, kind: str = "markdown") -> list[str]:
    [path] = (LESSONS / lesson).glob(f"{lesson}.ipynb")
    notebook = json.loads(path.read_text())
    return ["".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == kind]


def prose(markdown: str) -> str:
    """Markdown without fenced code blocks and inline code spans."""
    markdown = re.sub(r"```.*?```", "", markdown, flags=re.S)
    return re.sub(r"`[^`\n]*`", "", markdown)


def sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.;:])\s+|\n\s*[*-] ", text) if s.strip()]


# -- pedagogy review, M3, M4, M5, M8, M9 ---------------------------------------------------------


def test_m4_re_sent_answers_fail_as_a_mrtr_c6_note_not_a_must():
    """MRTR-C6 is a note (the schema's comment); MRTR-E3 SHOULD has servers ignore extras. The
    checkpoint may still want the exact set, but says the rule's level."""
    from tests.course.test_lesson_01_loop import MISTAKES, check, variant

    edits, _, _ = MISTAKES["sends old answers again"]
    verdict = check(variant(*edits))
    assert not verdict.passed
    assert "MRTR-C6 note" in verdict.message and "not a MUST" in verdict.message
    assert "MRTR-E3" in verdict.message
    assert lesson01_checkpoints is not None


def test_m5_constant_time_comparison_is_sec_2_not_a_kit_convention():
    """SEC-2 MUST: the tag is compared in constant time. Nothing in lesson 02, its quiz or the
    spec map may call that the kit's own choice (KIT)."""
    texts = [prose(c) for c in cells("02-securing-request-state")]
    texts += [q.ask for q in QUIZZES["02.4"].questions]
    texts += [o.why for q in QUIZZES["02.4"].questions for o in q.options]
    for text in texts:
        for sentence in sentences(text):
            if re.search(r"constant time|compare_digest", sentence):
                assert "KIT" not in sentence, sentence
    [row] = [r for r in SPEC_MAP.read_text().splitlines() if r.startswith("| **SEC-2** |")]
    assert "constant time" in row and "KIT" not in row, row


def test_m8_lesson_01_sends_the_ledger_and_single_use_to_02b():
    """Since the 02/02b split, the ledger, rotation and "act once" live in 02b."""
    for cell in cells("01-the-basic-flow"):
        for paragraph in cell.split("\n\n"):
            if re.search(r"\bledger|\brotat|last answer, once", paragraph):
                assert "02b" in paragraph, paragraph


def test_m9_lesson_00_says_the_kit_seals_the_state_mrtr_s3_makes_it_optional_and_opaque():
    """MRTR-S3 MAY: requestState is optional and opaque; sealing is required only when it
    matters (MRTR-S4a). Lesson 00 must not present "sealed" as what the protocol returns."""
    text = "\n".join(cells("00-why-mrtr"))
    assert "with what it\nneeds and a sealed `requestState`" not in text
    [section] = [c for c in cells("00-why-mrtr") if c.startswith("## 2. The same question")]
    assert "MRTR-S3" in section and "the kit seals it" in section and "optional" in section


# -- newcomer review: broken ---------------------------------------------------------------------


@pytest.mark.slow
def test_newcomer_broken_1_decline_by_hand_in_05_then_the_next_cell_raises_nothing():
    """05 §2: press Decline on the form yourself (the click runs ``flow.form.decline()``), then
    run the next cell as written: it used to raise a 20-line RuntimeError. Now it leaves the
    answer alone and prints where the call ended."""
    code = cells("05-a-real-host-OPTIONAL", "code")
    [start] = [c for c in code if "start_traced_server()" in c]
    [begin] = [c for c in code if 'start_tool_call(client, "book_table"' in c]
    [decline] = [c for c in code if "flow.form.decline()" in c]
    namespace: dict = {}
    cwd = Path.cwd()
    kit_logger = logging.getLogger("mrtr_kit")
    level = kit_logger.level  # the cell quietens it: give it back to the other tests
    os.chdir(LESSONS / "05-a-real-host-OPTIONAL")
    try:
        run_cell(start, namespace)
    finally:
        os.chdir(cwd)
        kit_logger.setLevel(level)
    server = namespace["server"]
    printed: list[str] = []
    namespace["print"] = lambda *a, **_: printed.append(" ".join(map(str, a)))

    async def learner() -> None:
        for source in (begin, "flow.form.decline()\nawait flow.settled()", decline):
            await run_cell_in_loop(source, namespace)
        await namespace["client"].aclose()

    try:
        asyncio.run(learner())
    finally:
        server.stop()
    assert printed and printed[-1].startswith("complete - "), printed
    assert "nothing was booked" in printed[-1].lower(), printed


README_COMMAND = re.compile(r"^(?P<python>\S*python3?) -m (?P<module>mrtr_kit|mrtr_course)\b")


def readme_commands() -> list[str]:
    """Every ``python -m mrtr_kit|mrtr_course`` line of the README's shell blocks."""
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```(?:bash|sh|shell)\n(.*?)```", text, flags=re.S)
    return [
        line.split("  #")[0].strip()
        for block in blocks
        for line in block.splitlines()
        if README_COMMAND.match(line.strip())
    ]


def test_newcomer_broken_3_readme_commands_are_written_with_the_kits_venv_python():
    """At the repository's root, a bare ``python -m mrtr_kit`` finds ``mrtr_kit/`` but not its
    dependencies (ModuleNotFoundError): every shell line says ``.venv/bin/python``, and so does
    every inline ``python -m`` the README's prose tells a reader to type."""
    commands = readme_commands()
    assert len(commands) >= 10
    assert all(c.startswith(".venv/bin/python -m ") for c in commands), commands
    text = re.sub(r"```.*?```", "", (ROOT / "README.md").read_text(), flags=re.S)
    inline = re.findall(r"`([^`\n]*\bpython -m mrtr_(?:kit|course)[^`\n]*)`", text)
    stray = [c for c in inline if not c.startswith((".venv/bin/python", ".venv\\Scripts"))]
    assert stray == ["python -m mrtr_kit"], stray  # once: the activated-venv form, named as such


@pytest.mark.slow
def test_newcomer_broken_3_each_readme_command_runs_from_the_repository_root(tmp_path):
    """Runs every README command of the reference-server block from the repository's root, as
    written but for what a test must change: ``--port 0`` for a fixed port, a ledger and trace
    in a temporary folder, a served URL for ``URL``. A server passes once it prints its URL (or,
    over stdio, exits 0 when stdin closes); ``conformance-client``, run without the suite's
    scenario, lists the scenarios it knows (status 2, its usage error); every other command
    must exit 0."""
    python = str(ROOT / ".venv" / "bin" / "python")
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'course'}"}
    ledger = tmp_path / "ledger.db"
    served_url = None
    ran = []
    for command in readme_commands():
        if "myserver" in command or command in ran:  # needs the reader's module; done once
            continue
        args = command.split()
        assert args[0] == ".venv/bin/python", command
        args = [python, *args[1:]]
        args = [str(ledger) if a == "sqlite:ledger.db" else a for a in args]
        args = [f"sqlite:{ledger}" if a == str(ledger) else a for a in args]
        args = [str(tmp_path / "rounds.jsonl") if a == "rounds.jsonl" else a for a in args]
        if "--port" in args:
            args[args.index("--port") + 1] = "0"
        if args[-1] == "URL":
            assert served_url, "a server line comes before conformance-client"
            args[-1] = served_url
        if "serve" in args and "--stdio" not in args:
            if "--port" not in args:
                args += ["--port", "0"]
            served_url = _serve_until_url(args, env)
        else:
            done = subprocess.run(  # stdin at EOF: stdio serve exits, demo takes it as cancel
                args, cwd=ROOT, env=env, input="", capture_output=True, text=True, timeout=120
            )
            assert "ModuleNotFoundError" not in done.stderr
            if "conformance-client" in args:  # the harness names a scenario: none here
                assert done.returncode == 2 and "this client runs:" in done.stderr, done.stderr
            else:
                assert done.returncode == 0, (command, done.stdout[-800:], done.stderr[-800:])
        ran.append(command)
    assert len(ran) >= 9


def _serve_until_url(args: list[str], env: dict) -> str:
    """Start a server line, wait for the URL it prints, then stop it."""
    process = subprocess.Popen(
        args, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    seen = []
    assert process.stdout is not None
    for line in process.stdout:
        seen.append(line)
        found = re.search(r"http://127\.0\.0\.1:\d+/mcp", line)
        if found:
            process.terminate()
            process.wait(timeout=30)
            return found[0]
    process.wait(timeout=30)
    raise AssertionError(f"{' '.join(args[1:])} printed no URL:\n{''.join(seen)[-1500:]}")


# -- newcomer review: confusing ------------------------------------------------------------------


def test_newcomer_confusing_02_forge_admin_padding_mistake_gets_its_reason():
    """Exercise 1 re-encoded with ``urlsafe_b64encode`` and kept the ``=`` padding: the
    checkpoint used to say only "-32602 Invalid requestState". It now says why."""
    import base64

    from lesson02_checkpoints import check_forge_admin

    def padded(token: str) -> str:
        fmt, payload = token.split(".")
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        claims["data"]["admin"] = True
        edited = base64.urlsafe_b64encode(json.dumps(claims).encode()).decode()
        if not edited.endswith("="):  # make sure the mistake is there to see
            claims["data"]["pad"] = "x"
            edited = base64.urlsafe_b64encode(json.dumps(claims).encode()).decode()
        assert edited.endswith("=")
        return f"{fmt}.{edited}"

    verdict = asyncio.run(check_forge_admin(padded))
    assert verdict.status == "not yet"
    assert "padding" in verdict.message and "rstrip(b'=')" in verdict.message


def test_newcomer_confusing_02_dollar_amounts_never_render_as_latex():
    """Two bare ``$`` in one Markdown cell open a LaTeX span in JupyterLab ("$124.50 ... $19.90"
    became italic run-together maths). Every lesson: an amount is written ``\\$124.50``."""
    offenders = []
    for path in sorted(LESSONS.glob(LESSON_GLOB)):
        notebook = json.loads(path.read_text())
        for n, cell in enumerate(notebook["cells"]):
            if cell["cell_type"] != "markdown":
                continue
            text = prose("".join(cell["source"]))
            dollars = re.findall(r"(?<!\\)\$(?=\s?\d)", text)
            bare = re.findall(r"(?<!\\)\$", text)
            if dollars and len(bare) >= 2:
                offenders.append(f"{path.name} cell {n}")
    assert offenders == [], offenders


KIT = ROOT / "tools" / "kit.py"


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["-h"],
        *[
            [command, "--help"]
            for command in (
                "lab",
                "test",
                "store",
                "doctor",
                "reset",
                "binder-url",
                "install",
                "wheelhouse",
                "inspector",
                "docs",
                "slides",
            )
        ],
    ],
    ids=" ".join,
)
@pytest.mark.slow
def test_newcomer_confusing_kit_help_is_the_kits_own_and_installs_nothing(tmp_path, args):
    """``test --help`` used to install 600 MB and show pytest's help, ``reset --help`` looked
    for a lesson called --help, ``doctor --help`` ran the doctor. Each prints the kit's own help,
    exits 0, and in a copy with no ``.venv/`` creates nothing at all."""
    (tmp_path / "tools").mkdir()
    shutil.copy(KIT, tmp_path / "tools" / "kit.py")
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("MRTR_KIT")}
    done = subprocess.run(
        [sys.executable, str(tmp_path / "tools" / "kit.py"), *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before
    assert "[kit]" not in done.stdout  # no step of an install or a run was announced
    name = args[0] if args[0] not in ("--help", "-h") else ""
    assert f"python3 tools/kit.py {name}".strip() in done.stdout
    if name:
        assert "Every command: python3 tools/kit.py --help" in done.stdout


# -- 02b exercise 2: a checkpoint that hung, and one that passed wrongly --------------------------

ATOMIC = "INSERT OR IGNORE INTO spent (jti) VALUES (?)"
_GUARD = threading.Lock()


def check_then_act_under_a_lock(db, jti):
    with _GUARD:  # serialises this process's threads; another process has its own lock
        if db.execute("SELECT 1 FROM spent WHERE jti = ?", (jti,)).fetchone():
            return False
        db.execute(ATOMIC, (jti,))
        db.commit()
        return True


_SPENT: set[str] = set()


def decided_by_a_module_level_set(db, jti):
    if jti in _SPENT:  # one process's memory: the deciding check
        return False
    _SPENT.add(jti)
    db.execute(ATOMIC, (jti,))  # recorded in the file too, so the file looks right
    db.commit()
    return True


_SHARED = types.SimpleNamespace(lock=threading.Lock())  # out of reach of the per-process copy


def check_then_act_under_a_lock_it_cannot_copy(db, jti):
    with _SHARED.lock:
        if db.execute("SELECT 1 FROM spent WHERE jti = ?", (jti,)).fetchone():
            return False
        db.execute(ATOMIC, (jti,))
        db.commit()
        return True


def test_newcomer_02b_ex2_a_check_then_act_under_a_threading_lock_fails_and_names_the_lock():
    """MRTR-S5d: a threading.Lock serialises one process's threads; two instances are two
    processes. Instance B runs its own process's copy (its own lock), so the forced race makes
    the check-then-act pay twice, and the verdict names the lock. It used to hang for ever."""
    check = lesson02b_checkpoints.check_spend_once(check_then_act_under_a_lock, rounds=2)
    assert check.status == "not yet", check
    assert "paid twice" in check.message
    assert "its own _GUARD" in check.message and "threading.Lock" in check.message


def test_newcomer_02b_ex2_a_lock_out_of_the_copys_reach_gets_a_bounded_wait_that_names_it(
    monkeypatch,
):
    """The same mistake with the lock where the copy cannot replace it: the turns would wait for
    ever (A holds the lock and waits for B's turn; B waits for the lock). The wait is bounded
    and the verdict says what held B back."""
    monkeypatch.setattr(lesson02b_spend, "STALLED_S", 2.0)
    check = lesson02b_checkpoints.check_spend_once(
        check_then_act_under_a_lock_it_cannot_copy, rounds=1
    )
    assert check.status == "not yet", check
    assert "did not reach its next statement in 2 s" in check.message
    assert "threading.Lock" in check.message and "two processes" in check.message


def test_newcomer_02b_ex2_a_spend_decided_from_a_module_level_set_fails():
    """MRTR-S5d: a set in Python is one process's memory. The spend below also writes the file,
    so it used to pass; B, another process with its own empty set, now pays the id again."""
    _SPENT.clear()
    check = lesson02b_checkpoints.check_spend_once(decided_by_a_module_level_set, rounds=2)
    assert check.status == "not yet", check
    assert "instance B spending the id A had spent returned True" in check.message
    assert "its own _SPENT" in check.message and "one process's memory" in check.message


# -- diagnostic questions where the quizzes had none (issue 31, item 5) ---------------------------


@pytest.mark.parametrize(
    ("key", "rules"),
    [("01.2", {"MRTR-R1", "MRTR-R2"}), ("02b", {"CACHE-3", "CACHE-6"}), ("02b", {"CACHE-2"})],
)
def test_pedagogy_quiz_gap_caching_and_which_methods_may_ask_have_a_question(key, rules):
    """The pedagogy review: caching (CACHE-2/3/6) and which methods may ask (MRTR-R1/R2) had no
    question. Both are taught in full in 01b only; the core path now asks them, which methods in
    01 (quiz 01.2, after the first input_required) and caching at the end of 02b (after its lost
    final response, where caching the answer tempts). The right answer's explanation cites the
    rules, and each wrong option explains its misconception with a rule of its own."""
    asked = [q for q in QUIZZES[key].questions if rules <= cited_ids(q.options[q.answer].why)]
    assert len(asked) == 1, [q.ask for q in QUIZZES[key].questions]
    [question] = asked
    wrong = [o for o in question.options if not o.right]
    assert len(wrong) >= 2
    for option in wrong:
        assert cited_ids(option.why), option


# -- lesson 05's host table (issue 31, item 7) --------------------------------------------------

HOST_ROW = re.compile(r"^\| \*\*(?P<host>[^*]+)\*\*")
LINK = re.compile(r"\[[^\]]+\]\((?P<url>https://github\.com/[\w.-]+/[\w.-]+/(?:issues|pull)/\d+)\)")
DATE = re.compile(r"\b20\d\d-(?:0[1-9]|1[0-2])(?:-(?:0[1-9]|[12]\d|3[01]))?\b")


def test_lesson_05_host_table_gives_each_row_a_source_link_and_a_date_and_how_to_check_again():
    """The peers-and-hosts review's evidence, row by row: every host in the table names the
    public issue or pull request it rests on (a link) and a date, and the lesson says how to
    check again. Before, two rows had neither and none had a link."""
    [survey] = [c for c in cells("05-a-real-host-OPTIONAL") if c.startswith("## 1. Which hosts")]
    rows = [line for line in survey.splitlines() if HOST_ROW.match(line)]
    assert len(rows) >= 6
    for row in rows:
        source = row.rstrip(" |").rsplit("|", 1)[1]  # the last column: "Source, date"
        assert LINK.search(source), row
        assert DATE.search(source), row
    hosts = {HOST_ROW.match(r)["host"] for r in rows}
    for host in ("MCP Inspector", "MCPJam Inspector", "Claude Code", "VS Code", "Goose"):
        assert host in hosts
    assert "**Checking again.**" in survey and "npm view" in survey


def test_the_rule_ids_this_file_cites_are_in_the_spec_map():
    assert {"MRTR-S5d", "MRTR-C6", "SEC-2"} <= cited_ids(SPEC_MAP.read_text())
