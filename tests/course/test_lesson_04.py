"""Lesson 04 (the capstone): the gate passes the worked solution and fails the unported
scaffold and plausible half-ports, each with the right item and message.

Two exercises: 1 ports the server (its checkpoint, ``gate(build_server, fleet=False)``, runs
items 1 to 6 in the kernel), 2 (section 4, optional) gives its ``build_server`` the fleet's key
ring (its checkpoint, ``check_fleet(build_server)``, runs every item, the fleet's included).

The gate's checks cite MIG-2 (earlier answers travel in requestState), CAP-2 (-32021 for a
missing capability), MRTR-S4a (a tampered state is refused), MRTR-E1/E3/E4.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from pathlib import Path

import lesson04_gate as capstone
import nbformat
import pytest

from mrtr_course.fleet import FRONT_URL, RoundRobin
from mrtr_course.legacy import LegacyServer
from mrtr_kit.protocol.models import ElicitResult
from tests.lesson_files import LESSONS

NOTEBOOK = LESSONS / "04-port-your-own-server" / "04-port-your-own-server.ipynb"
SOLUTION_SOURCE = capstone.SOLUTION.read_text()  # exercise 1: the port, one process's key
FLEET_SOURCE = capstone.FLEET_SOLUTION.read_text()  # exercise 2: build_server, the fleet's keys
SOLUTIONS = (capstone.SOLUTION, capstone.FLEET_SOLUTION)  # served as one, as the cells run


def _replace_function(source: str, name: str, new: str) -> str:
    """``source`` with the top-level function ``name`` replaced by ``new``."""
    start = source.index(f"def {name}(")
    end = source.index("\ndef ", start + 1)
    return source[:start] + new.strip() + "\n\n" + source[end:]


# A half-port that keeps the number of people in this process's memory: it works on one
# instance, and round 3 on the other instance no longer knows it (exercise 1's item 6; with
# exercise 2's build_server after it, the fleet's item 7 too).
MEMORY_PORT = _replace_function(
    SOLUTION_SOURCE,
    "book_table",
    """
PEOPLE = {}  # date -> people: this process's memory, not requestState


def book_table(ctx: RequestContext):
    date = ctx.arguments["date"]
    if date not in PEOPLE:
        party = ctx.form("people", f"How many people on {date}?", PEOPLE_FORM)
        if party.needs_asking:
            return party.ask()
        if not party.accepted:
            return "No table booked."
        PEOPLE[date] = party.content["people"]
    people = PEOPLE[date]
    slot = ctx.form("time", f"What time on {date}, for {people}?", TIME_FORM)
    if slot.needs_asking:
        return slot.ask()
    PEOPLE.pop(date)
    if not slot.accepted:
        return "No table booked."
    time = slot.content["time"]
    return f"Table for {people} on {date} at {time}, reference {TABLES.book(date, people, time)}."
""",
)

# A half-port that asks for the size with the wrong capability: sampling, not a form.
SAMPLING_PORT = _replace_function(
    SOLUTION_SOURCE,
    "order_pizza",
    """
def order_pizza(ctx: RequestContext):
    from mrtr_kit.server.context import create_message

    pizza = ctx.arguments["pizza"]
    reply = ctx.sampling("size")
    if reply is None:
        return ctx.input_required({"size": create_message(f"What size of {pizza}?")})
    return f"One {reply.content.text} {pizza}, ready in 20 minutes."
""",
)

# A half-port that forgets the people between rounds (no state at all): it never finishes.
FORGETFUL_PORT = SOLUTION_SOURCE.replace("state={}", "state=None").replace(
    "TIME_FORM, state=state)", "TIME_FORM)"
)


def _gate(path: Path, **kw: object) -> capstone.GateReport:
    return asyncio.run(capstone.gate(path, official=False, **kw))


def _check_fleet(target: object) -> capstone.Checkpoint:
    return asyncio.run(capstone.check_fleet(target, official=False))


def _write(tmp_path: Path, name: str, source: str) -> Path:
    path = tmp_path / name
    path.write_text(source)
    return path


class _Asker:
    """Stands in for the 2025-11-25 ``LegacyToolContext``: records what the tool asks and
    answers like the gate's scripted user."""

    def __init__(self, arguments: dict[str, object], action: str = "accept") -> None:
        self.arguments = arguments
        self.action = action
        self.asked: list[tuple[str, dict[str, object]]] = []

    async def elicit(self, message: str, schema: dict[str, object]) -> ElicitResult:
        self.asked.append((message, schema))
        content = {"size": "large", "people": 4, "time": "20:00"}
        fields = schema["properties"]  # type: ignore[index]
        if self.action != "accept":
            return ElicitResult(action=self.action)  # type: ignore[arg-type]
        return ElicitResult(action="accept", content={k: content[k] for k in fields})


def test_the_originals_texts_are_the_gates():
    """The gate's expected questions, forms and texts are the 2025-11-25 original's."""
    module = capstone.load_module(capstone.SCAFFOLD)
    pizza = _Asker(capstone.PIZZA)
    assert asyncio.run(module.order_pizza(pizza)) == capstone.pizza_text("large")
    assert pizza.asked == [("What size of margherita?", capstone.SIZE_FORM)]
    table = _Asker(capstone.TABLE)
    assert capstone.is_table(asyncio.run(module.book_table(table)), 4, "20:00")
    assert table.asked == [
        ("How many people on 2026-12-24?", capstone.PEOPLE_FORM),
        ("What time on 2026-12-24, for 4?", capstone.TIME_FORM),
    ]
    assert asyncio.run(module.order_pizza(_Asker(capstone.PIZZA, "decline"))) == capstone.NO_PIZZA
    assert asyncio.run(module.book_table(_Asker(capstone.TABLE, "cancel"))) == capstone.NO_TABLE
    assert {"order_pizza": module.PIZZA_SCHEMA, "book_table": module.TABLE_SCHEMA} == (
        capstone.INPUT_SCHEMAS
    )
    server = module.build_server()
    assert isinstance(server, LegacyServer)


@pytest.mark.slow
def test_worked_solution_passes_the_gate():
    """The two solutions, served as one, pass every item, the fleet test included (MIG-2,
    CAP-2, MRTR-S4a); exercise 2's checkpoint says so, naming the route."""
    report = _gate(SOLUTIONS)
    assert report.passed, report
    assert [item.status for item in report.items] == ["pass"] * 7 + ["skip"]
    assert "capstone-a → capstone-b → capstone-a" in report.item(capstone.TITLES[6]).why
    verdict = _check_fleet(SOLUTIONS)
    assert verdict.passed, verdict
    assert repr(verdict).startswith("✔ Passed: the port runs on the fleet, each round on the other")


def test_exercise_1s_solution_passes_its_checkpoint_items_1_to_6():
    """Exercise 1's checkpoint (``fleet=False``) passes the port with its own process's key;
    item 7 is skipped, saying which checkpoint runs it."""
    report = _gate(capstone.SOLUTION, fleet=False)
    assert report.passed, report
    assert [item.status for item in report.items] == ["pass"] * 6 + ["skip", "skip"]
    assert "exercise 2's check_fleet runs it" in report.item(capstone.TITLES[6]).why


def test_exercise_2s_solution_is_the_fleet_step_alone():
    """04_fleet.py is the diff that makes the port fleet-safe, not a second copy of the port:
    it defines build_server alone (the model counts its own lines), taking the ring."""
    module: dict[str, object] = {}
    exec(compile(FLEET_SOURCE, str(capstone.FLEET_SOLUTION), "exec"), module)
    functions = sorted(k for k, v in module.items() if callable(v) and k[0].islower())
    assert functions == ["build_server"], functions
    assert capstone.takes_keys(module["build_server"])
    assert not capstone.takes_keys(capstone.load_module(capstone.SOLUTION).build_server)


def test_unported_scaffold_fails_the_gate():
    """The 2025-11-25 scaffold fails item 1, and nothing else is checked (MIG-1)."""
    report = _gate(capstone.SCAFFOLD, fleet=False)
    assert not report.passed
    assert report.failed == capstone.TITLES[:1]
    assert "returns a LegacyServer" in report.item(capstone.TITLES[0]).why


def test_items_not_checked_are_not_counted_as_failing():
    """Items 2-8 wait on item 1: marked "·", never "✘", and the last line counts only the one
    item checked (issue 19: it said "8 of 8 items checked fail")."""
    report = _gate(capstone.SCAFFOLD, fleet=False)
    assert [item.status for item in report.items] == ["fail"] + ["wait"] * 7
    lines = repr(report).splitlines()
    assert all(line.startswith("· ") for line in lines[2:9]), lines
    assert lines[-1] == "✘ Not yet: 1 of 1 item checked fails (7 not checked until item 1 passes)."


def test_state_in_memory_fails_exercise_1s_checkpoint_on_the_second_instance(tmp_path):
    """Exercise 1's port makes its own key, and item 6 still sends round 3 to a second
    instance (given the first one's key): a port that keeps the people in memory fails there,
    without a fleet (MIG-2)."""
    assert "def build_server():" in MEMORY_PORT
    report = _gate(_write(tmp_path, "memory.py", MEMORY_PORT), fleet=False)
    assert report.failed == [capstone.TITLES[5]], report
    assert report.item(capstone.TITLES[3]).status == "pass"  # one process: it works
    assert "sent to a second instance of your server" in report.item(capstone.TITLES[5]).why


@pytest.mark.slow
def test_state_in_memory_fails_on_the_fleet(tmp_path):
    """Keeping the first answer in process memory, with exercise 2's build_server after it,
    passes in one process and fails the fleet test, and the kit's check finds that a second
    instance cannot finish round 3 (MIG-2); exercise 2's checkpoint says the fleet's finding
    first."""
    port = _write(tmp_path, "memory.py", MEMORY_PORT + "\n\n" + FLEET_SOURCE)
    report = _gate(port)
    assert report.failed == [capstone.TITLES[5], capstone.TITLES[6]], report
    assert report.item(capstone.TITLES[3]).status == "pass"  # one process: it works
    assert "sent to a second instance of your server" in report.item(capstone.TITLES[5]).why
    fleet = report.item(capstone.TITLES[6]).why
    assert "book_table failed on the fleet (capstone-a → capstone-b → capstone-a" in fleet
    assert "kept in memory instead of requestState" in fleet
    verdict = _check_fleet(port)
    assert verdict.status == "not yet"
    assert repr(verdict).startswith("✘ Not yet: item 7, the fleet: book_table failed on the fleet")
    assert "kept in memory instead of requestState" in verdict.message


@pytest.mark.slow
def test_a_key_per_instance_fails_on_the_fleet_naming_the_shared_key():
    """Exercise 1's solution alone: its ``build_server()`` takes no ``state_keys`` and makes a
    key in each process. It passes in one process (items 1 to 6), and exercise 2's checkpoint
    finds that no instance of the fleet opens another's requestState (CORE-8, CORE-9)."""
    assert "def build_server():" in SOLUTION_SOURCE
    assert "state_keys=KeyRing.generate()" in SOLUTION_SOURCE
    report = _gate(capstone.SOLUTION)
    assert report.failed == [capstone.TITLES[6]], report
    fleet = report.item(capstone.TITLES[6]).why
    assert "book_table failed on the fleet (capstone-a → capstone-b" in fleet
    assert "takes no state_keys" in fleet and "(CORE-8, CORE-9)" in fleet
    verdict = _check_fleet(capstone.SOLUTION)
    assert verdict.status == "not yet"
    assert repr(verdict).startswith("✘ Not yet: item 7, the fleet: book_table failed")
    assert "takes no state_keys" in verdict.message and "(CORE-8, CORE-9)" in verdict.message
    assert "✔ 6. the kit's MRTR checks" in verdict.message


def test_asking_with_sampling_fails(tmp_path):
    """Asking for the size with sampling (the wrong capability) fails order_pizza's item and
    says the original asked with a form (MRTR-S7)."""
    report = _gate(_write(tmp_path, "sampling.py", SAMPLING_PORT), fleet=False)
    why = report.item(capstone.TITLES[2]).why
    assert report.item(capstone.TITLES[2]).status == "fail"
    assert "asks for the client capability sampling" in why and "use ctx.form" in why
    assert "from a client with forms: error -32021" in report.item(capstone.TITLES[5]).why
    assert report.item(capstone.TITLES[3]).status == "pass"


def test_unprotected_state_fails_the_kits_check(tmp_path):
    """A port whose requestState a client can rewrite (the lessons-only plain codec) fails
    item 6: the forged number of people is refused nowhere (MRTR-S4a)."""
    source = SOLUTION_SOURCE.replace(
        'McpServer("pizzeria", state_keys=KeyRing.generate())',
        'McpServer("pizzeria", state_codec="plain")',
    )
    assert source != SOLUTION_SOURCE
    report = _gate(_write(tmp_path, "plain.py", source), fleet=False)
    assert report.failed == [capstone.TITLES[5]], report
    assert "not integrity-protected (MRTR-S4a)" in report.item(capstone.TITLES[5]).why


def test_giving_up_on_a_missing_answer_fails_the_kits_check(tmp_path):
    """Reading a retry without the size as "the user gave up" fails item 6: a missing answer
    is asked again (MRTR-E4), it does not end the call."""
    source = SOLUTION_SOURCE.replace(
        "        return answer.ask()\n",
        "        return answer.ask() if not ctx.is_retry else 'No pizza ordered.'\n",
        1,
    )
    assert source != SOLUTION_SOURCE
    report = _gate(_write(tmp_path, "gives_up.py", source), fleet=False)
    assert report.failed == [capstone.TITLES[5]], report
    assert "must ask again (MRTR-E4)" in report.item(capstone.TITLES[5]).why


def test_forgetting_the_first_answer_fails(tmp_path):
    """No requestState at all: book_table asks for the people forever (MIG-2)."""
    report = _gate(_write(tmp_path, "forgetful.py", FORGETFUL_PORT), fleet=False)
    assert capstone.TITLES[3] in report.failed
    assert "never finished" in report.item(capstone.TITLES[3]).why


def test_a_broken_file_is_reported_not_raised(tmp_path):
    report = _gate(_write(tmp_path, "broken.py", "def build_server():\n    return 1 / 0\n"))
    assert "ZeroDivisionError" in report.item(capstone.TITLES[0]).why
    assert report.failed == capstone.TITLES[:1] and not report.passed


def test_gate_takes_the_cell_that_defines_build_server(tmp_path, monkeypatch):
    """In the notebook the gate gets ``build_server`` itself and saves its cell to a file."""
    module = capstone.load_module(capstone.SOLUTION)
    assert capstone.cell_source(module.build_server) == SOLUTION_SOURCE
    report = asyncio.run(capstone.gate(module.build_server, fleet=False, official=False))
    assert report.passed, report
    assert report.target == "the cell that defines build_server()"


def _run_cell(source: str, number: int, namespace: dict[str, object]) -> None:
    """Run ``source`` as a kernel runs a cell: its own file name, its lines in linecache."""
    import linecache

    filename = f"<capstone-test-cell-{number}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), namespace)


def test_gate_serves_exercise_2s_cell_after_the_cell_of_the_tools():
    """Exercise 2's cell redefines ``build_server`` alone: the gate saves the cell of the tools
    it registers (exercise 1's) first, then its own, and the ring reaches the port."""
    namespace: dict[str, object] = {"__name__": "__main__"}
    _run_cell(SOLUTION_SOURCE, 1, namespace)
    _run_cell(FLEET_SOURCE, 2, namespace)
    build = namespace["build_server"]
    source = capstone.cell_source(build)
    assert source == capstone.joined(SOLUTIONS), source[:200]
    module = capstone.load_module(capstone.SOLUTION)
    assert capstone.cell_source(module.build_server) == SOLUTION_SOURCE  # one file: itself
    report = asyncio.run(capstone.gate(build, fleet=False, official=False))
    assert report.passed, report


SOLUTION_SENTENCE = (
    "Solution: delete the `# ` in front of `%load` in the exercise cell and run it: the cell is "
    "replaced by the solution. Run it once more, then run the checkpoint below."
)
STUB_LINE = "# %load solutions/04_pizzeria.py"
CHECKPOINT = "await capstone.gate(build_server, fleet=False)"
FLEET_STUB_LINE = "# %load solutions/04_fleet.py"
FLEET_CHECKPOINT = "await capstone.check_fleet(build_server)"


@pytest.fixture(scope="module")
def notebook():
    return nbformat.read(NOTEBOOK, as_version=4)


def flat(text: str) -> str:
    return " ".join(text.split())


def test_notebook_opens_with_objectives_needs_time_spec_links_and_a_sequence_diagram(notebook):
    text = flat(notebook.cells[0].source)
    for part in (
        "What you will learn",
        "What you need",
        "minutes to read and try, plus about ",  # the model's ranges (test_lesson_sizes.py)
        "minutes for the exercise. The sections marked (optional) add about ",
        "These times are estimates until a workshop has timed them.",
        "**Teaching it**: about ",
        "(https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr)",
        "(https://modelcontextprotocol.io/seps/2322-MRTR)",
        "[docs/spec-map.md](../../docs/spec-map.md); IDs tagged (KIT) are this kit's own",
        "```mermaid",
        "sequenceDiagram",
    ):
        assert part in text, part


def test_notebook_closes_with_key_points_practice_and_the_cheatsheet(notebook):
    last = notebook.cells[-1].source
    parts = ["## Key points", "## In practice", "[docs/cheatsheet.md](../../docs/cheatsheet.md)"]
    assert [last.index(part) for part in parts] == sorted(last.index(part) for part in parts)


def test_the_header_and_the_end_lead_on_to_lesson_05(notebook):
    """Lesson 05 (optional) follows the capstone: linked from the contents and the end."""
    link = "[05 · A real host](../05-a-real-host-OPTIONAL/05-a-real-host-OPTIONAL.ipynb)"
    assert link in notebook.cells[0].source and link in notebook.cells[-1].source


@pytest.mark.parametrize(
    ("number", "stub_line", "call"),
    [(1, STUB_LINE, CHECKPOINT), (2, FLEET_STUB_LINE, FLEET_CHECKPOINT)],
)
def test_the_exercise_has_the_one_layout_heading_stub_hint_and_checkpoint_cell(
    notebook, number, stub_line, call
):
    """Each exercise: its heading, the stub under its ``# %load`` line (exercise 1's holds the
    unported scaffold), the hint ending with the solution sentence, and the checkpoint alone in
    the next cell."""
    cells = notebook.cells
    [i] = [k for k, c in enumerate(cells) if c.source.startswith(stub_line)]
    heading, stub, hint, checkpoint = cells[i - 1], cells[i], cells[i + 1], cells[i + 2]
    assert re.match(rf"### Exercise {number} · [^\n]+ \(\d+ min\)\n", heading.source)
    assert "exercise-stub" in stub.metadata.get("tags", [])
    if number == 1:
        assert stub.source.partition("\n")[2].strip() == capstone.SCAFFOLD.read_text().strip()
    assert hint.source.startswith("<details><summary>Hint</summary>")
    assert hint.source.rstrip().endswith(SOLUTION_SENTENCE)
    assert checkpoint.cell_type == "code" and checkpoint.source == call


def test_the_fleet_exercise_is_in_a_section_marked_optional_and_the_port_is_core(notebook):
    """The split that keeps the core within the hour (issue 31): exercise 1, the port, in the
    core; exercise 2, the fleet, in ``## 4. … (optional)``, with the terminal commands."""
    sys.path.insert(0, str(capstone.ROOT / "benchmarks"))
    import reading_time

    r = reading_time.read(NOTEBOOK)
    assert [x.title for x in r.core.exercises] == ["Port the pizzeria"]
    assert [x.title for x in r.extra.exercises] == ["Onto the fleet"]
    assert r.optional_sections == ["4. The port on a fleet (optional)"]
    sources = [c.source for c in notebook.cells]
    [section] = [k for k, s in enumerate(sources) if s.startswith("## 4. The port on a fleet")]
    [terminal] = [k for k, s in enumerate(sources) if "**Run one instance" in s]
    [fleet_stub] = [k for k, s in enumerate(sources) if s.startswith(FLEET_STUB_LINE)]
    assert section < terminal < fleet_stub


def test_notebook_is_stored_with_the_scaffold_failing_the_gate(notebook):
    """The stored run: the unported server, every item ✘ (item 1 says why)."""
    code = [c for c in notebook.cells if c.cell_type == "code"]
    assert all(c.execution_count is not None for c in code)
    [gate] = [c for c in code if c.source == CHECKPOINT]
    text = gate.outputs[0]["data"]["text/plain"]
    assert "✘ 1. a 2026-07-28 server: build_server() returns a LegacyServer" in text
    assert text.endswith(
        "✘ Not yet: 1 of 1 item checked fails (7 not checked until item 1 passes)."
    )
    [fleet] = [c for c in code if c.source == FLEET_CHECKPOINT]
    text = fleet.outputs[0]["data"]["text/plain"]
    assert text.startswith("✘ Not yet: item 1 fails, so nothing else was checked: exercise 1")


@pytest.mark.slow
def test_notebook_with_the_solution_loaded_passes_its_gate(notebook, tmp_path, monkeypatch):
    """Do what the solution sentence says, in a real kernel: the exercise cell as ``%load``
    leaves it, then the gate, which starts the fleet from the cell's source."""
    from nbclient import NotebookClient

    for name in ("JUPYTER_RUNTIME_DIR", "IPYTHONDIR", "JUPYTER_DATA_DIR", "JUPYTER_CONFIG_DIR"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    run = nbformat.from_dict(json.loads(json.dumps(notebook)))
    [stub] = [c for c in run.cells if c.source.startswith(STUB_LINE)]
    stub.source = f"{STUB_LINE}\n{SOLUTION_SOURCE}"
    [stub] = [c for c in run.cells if c.source.startswith(FLEET_STUB_LINE)]
    stub.source = f"{FLEET_STUB_LINE}\n{FLEET_SOURCE}"
    NotebookClient(
        run,
        timeout=240,
        kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOK.parent)}},
    ).execute()
    [gate] = [c for c in run.cells if c.source == CHECKPOINT]
    text = gate.outputs[0]["data"]["text/plain"]
    assert "– 7. the fleet: round 2 on another instance: skipped (fleet=False)" in text, text
    assert "✔ Passed: all" in text, text
    [fleet] = [c for c in run.cells if c.source == FLEET_CHECKPOINT]
    text = fleet.outputs[0]["data"]["text/plain"]
    assert text.startswith("✔ Passed: the port runs on the fleet"), text
    assert "✔ 7. the fleet: round 2 on another instance" in text, text
    assert "capstone-a → capstone-b → capstone-a" in text, text


@pytest.mark.slow
def test_served_file_answers_like_in_process(tmp_path):
    """``python notebooks/04-port-your-own-server/lesson04_gate.py PATH`` serves the file (as
    the fleet does)."""
    from mrtr_course.fleet import start_processes
    from mrtr_kit.client import McpClient

    fleet = start_processes({"one": capstone.serve_command(capstone.SOLUTION, "one")})
    try:

        async def run() -> str:
            user = capstone.scripted_user(size="small")
            transport = RoundRobin(fleet.urls).transport()
            async with McpClient(FRONT_URL, elicitation=user, transport=transport) as client:
                return capstone._text(await client.call_tool("order_pizza", capstone.PIZZA))

        assert asyncio.run(run()) == capstone.pizza_text("small")
    finally:
        fleet.stop()


@pytest.mark.slow
def test_official_suite_part_passes_the_solution():
    """Item 8 runs the official suite's any-server scenarios (tools-list,
    input-required-result-unsupported-methods) on a served solution. Skipped without the suite
    in .conformance/; under CI, which installs it before the tests, a missing suite fails."""
    if capstone.suite_cli() is None:
        message = f"the official suite is not installed ({capstone.SUITE_INSTALL})"
        if os.environ.get("CI"):
            pytest.fail(f"{message}; CI must install it")
        pytest.skip(message)
    report = asyncio.run(capstone.gate(capstone.SOLUTION, fleet=False))
    assert report.item(capstone.TITLES[7]).status == "pass", report
    assert "no FAILURE, no WARNING" in report.item(capstone.TITLES[7]).why


def test_official_suite_part_is_skipped_saying_so_without_the_suite(tmp_path):
    """No suite installed: item 8 is skipped (–), never passed or failed, and says how to
    install it."""
    report = asyncio.run(capstone.gate(capstone.SOLUTION, fleet=False, suite_dir=tmp_path))
    item = report.item(capstone.TITLES[7])
    assert item.status == "skip" and "npm install" in item.why
    # It says the item is optional, and names its paths from the repository's root, the lab's
    # root (kit.py lab), where both exist (issue 19: they were relative to notebooks/).
    assert item.why.startswith("optional, skipped:") and "the gate passes without it" in item.why
    assert "tools/run_conformance.py, in the repository's root folder" in item.why
    assert (capstone.ROOT / "tools" / "run_conformance.py").is_file()
    assert report.passed
    assert repr(report).endswith("✔ Passed: all 6 items checked pass (2 skipped).")


# -- the self-check before the port ---------------------------------------------------------------


def test_the_predict_the_output_question_is_right_about_the_scaffolds_gate(monkeypatch, capsys):
    """Quiz 04.2's first question shows a cell; run it as the notebook would (from the
    lesson's folder, where its kernel runs), and its right option is what it prints, so the quiz
    cannot drift (KIT). The cell gates the unported scaffold, not a path that is not there."""
    from mrtr_course.quizzes import quiz
    from tests.lesson_files import run_cell

    question = quiz("04.2").questions[0]
    monkeypatch.chdir(capstone.HERE)
    target = re.search(r'capstone\.gate\("([^"]+)"', question.code)[1]
    assert Path(target).resolve() == capstone.SCAFFOLD, target
    run_cell(question.code, {"capstone": capstone})
    printed = capsys.readouterr().out.strip()
    assert question.options[question.answer].text == printed
    assert all(o.text != printed for o in question.options if not o.right)


# -- running an instance from JupyterLab's terminal ------------------------------------------------


def _terminal_blocks() -> list[str]:
    [cell] = [c for c in nbformat.read(NOTEBOOK, 4).cells if "**Run one instance" in c.source]
    return re.findall(r"```\n(.*?)```", cell.source, flags=re.S)


def test_the_terminal_commands_use_the_kits_venv_and_paths_from_the_repository_root():
    """JupyterLab's terminal opens at the repository's root and its ``python`` is not the
    venv's (issue 19: "from this folder" with ``python`` failed there). Both forms name the
    venv's Python, the gate's script and the files it serves (both exercises' solutions, in
    order), each a file that exists from the root."""
    posix, windows = _terminal_blocks()
    for line in posix.strip().splitlines():
        assert ".venv/bin/python" in line and " python " not in f" {line} "
    assert ".venv\\Scripts\\python" in windows and "$env:MRTR_KIT_STATE_KEY" in windows
    for block, sep in ((posix, "/"), (windows, "\\")):
        files = re.findall(r"\S+\.py\b", block)
        assert [Path(*f.split(sep)).name for f in files] == [
            "lesson04_gate.py",
            "04_pizzeria.py",
            "04_fleet.py",
        ], files
        for path in files:
            assert (capstone.ROOT / Path(*path.split(sep))).is_file(), path


@pytest.mark.slow
def test_the_documented_terminal_command_serves_from_the_repository_root(tmp_path):
    """Run the lesson's Linux/macOS block with bash from the repository root, as JupyterLab's
    terminal would; it prints the address it serves, as the lesson says. Where the kit's venv
    is not at .venv (a shared venv), the Python running the tests stands in for it."""
    import signal
    import subprocess

    block = _terminal_blocks()[0]
    if not (capstone.ROOT / ".venv" / "bin" / "python").exists():
        block = block.replace(".venv/bin/python", sys.executable)
    process = subprocess.Popen(
        ["bash", "-c", block],
        cwd=capstone.ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # its own process group: bash and the server stop together
    )
    try:
        first = process.stdout.readline()
        assert re.fullmatch(
            r"Serving notebooks/04-port-your-own-server/solutions/04_pizzeria\.py "
            r"notebooks/04-port-your-own-server/solutions/04_fleet\.py "
            r"at http://127\.0\.0\.1:\d+/mcp\n",
            first,
        ), first + process.stdout.read() if process.poll() is not None else first
    finally:
        os.killpg(process.pid, signal.SIGTERM)  # the group this test started, by its id
        process.wait(timeout=20)


# Issue 31, S3: a port that books after the last answer but on every final retry that arrives.
BOOKS_TWICE_PORT = SOLUTION_SOURCE.replace(
    'TABLES.book(date, people, time, key=state["key"])', "TABLES.book(date, people, time)"
)


def test_s3_a_port_that_books_on_every_final_retry_fails_item_6_naming_mig3_and_http26(
    tmp_path,
):
    """The gate sends book_table's final retry twice, as a client does whose response was
    lost (HTTP-26): a second table fails item 6, naming MIG-3 and HTTP-26; the solution, which
    books under a key sealed in the state, books one."""
    assert BOOKS_TWICE_PORT != SOLUTION_SOURCE
    report = _gate(_write(tmp_path, "twice.py", BOOKS_TWICE_PORT), fleet=False)
    assert report.failed == [capstone.TITLES[5]], report
    why = report.item(capstone.TITLES[5]).why
    assert "booked a second table: T-" in why
    assert "(HTTP-26 MUST" in why and "(MIG-3)" in why


# Issue 31, S2: a port that reads the size with ctx.elicitation and never checks it.
UNCHECKED_PORT = _replace_function(
    SOLUTION_SOURCE,
    "order_pizza",
    """
def order_pizza(ctx: RequestContext):
    from mrtr_kit.server.context import elicit_form

    pizza = ctx.arguments["pizza"]
    answer = ctx.elicitation("size")
    if answer is None:
        return ctx.input_required({"size": elicit_form(f"What size of {pizza}?", SIZE_FORM)})
    if answer.action != "accept":
        return "No pizza ordered."
    return f"One {answer.content['size']} {pizza}, ready in 20 minutes."
""",
)


def test_s2_a_port_that_does_not_validate_answers_fails_item_6_naming_elic14(tmp_path):
    """An out-of-schema size and an accept with no content must be asked again (ELIC-14,
    MRTR-E4); a port that uses answer.content unchecked fails item 6 saying so."""
    report = _gate(_write(tmp_path, "unchecked.py", UNCHECKED_PORT), fleet=False)
    assert report.failed == [capstone.TITLES[5]], report
    why = report.item(capstone.TITLES[5]).why
    assert "with the size 'huge'" in why and "(ELIC-14 SHOULD, MRTR-E4 SHOULD)" in why


@pytest.mark.slow
@pytest.mark.skipif(os.name == "nt", reason="Ctrl-C is a console event on Windows, not SIGINT")
def test_broken_moment_2_ctrl_c_stops_the_capstone_server_in_one_line(tmp_path):
    """Newcomer broken moment 2: Ctrl-C on the served capstone printed a 25-line traceback.
    Now it prints one line and exits 0, serving both exercises' solutions as section 4 says."""
    import signal
    import subprocess

    command = [sys.executable, str(capstone.HERE / "lesson04_gate.py"), *map(str, SOLUTIONS)]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(
        [*command, "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline().startswith("Serving ")  # wait for the URL, no sleep
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0
    assert err == ""
    assert out.strip() == f"Stopped serving {capstone.SOLUTION} {capstone.FLEET_SOLUTION}."
