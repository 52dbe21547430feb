"""Lesson 04 (the capstone): the gate passes the worked solution and fails the unported
scaffold and plausible half-ports, each with the right item and message.

The gate's checks cite MIG-2 (earlier answers travel in requestState), CAP-2 (-32021 for a
missing capability), MRTR-S4a (a tampered state is refused), MRTR-E1/E3/E4.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from mrtr_kit.fleet import FRONT_URL, RoundRobin
from mrtr_kit.legacy import LegacyServer
from mrtr_kit.lessons import capstone
from mrtr_kit.protocol.models import ElicitResult

NOTEBOOK = capstone.ROOT / "notebooks" / "04-port-your-own-server.ipynb"
SOLUTION_SOURCE = capstone.SOLUTION.read_text()


def _replace_function(source: str, name: str, new: str) -> str:
    """``source`` with the top-level function ``name`` replaced by ``new``."""
    start = source.index(f"def {name}(")
    end = source.index("\ndef ", start + 1)
    return source[:start] + new.strip() + "\n\n" + source[end:]


# A half-port that keeps the number of people in this process's memory: it works on one
# instance, and round 3 on the other instance no longer knows it.
MEMORY_PORT = _replace_function(
    SOLUTION_SOURCE,
    "book_table",
    '''
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
    return f"Table for {people} on {date} at {slot.content['time']}."
''',
)

# A half-port that asks for the size with the wrong capability: sampling, not a form.
SAMPLING_PORT = _replace_function(
    SOLUTION_SOURCE,
    "order_pizza",
    '''
def order_pizza(ctx: RequestContext):
    from mrtr_kit.server.context import create_message

    pizza = ctx.arguments["pizza"]
    reply = ctx.sampling("size")
    if reply is None:
        return ctx.input_required({"size": create_message(f"What size of {pizza}?")})
    return f"One {reply.content.text} {pizza}, ready in 20 minutes."
''',
)

# A half-port that forgets the people between rounds (no state at all): it never finishes.
FORGETFUL_PORT = SOLUTION_SOURCE.replace("state={}", "state=None").replace(
    "TIME_FORM, state=state)", "TIME_FORM)"
)


def _gate(path: Path, **kw: object) -> capstone.GateReport:
    return asyncio.run(capstone.gate(path, official=False, **kw))


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
    assert asyncio.run(module.book_table(table)) == capstone.table_text(4, "20:00")
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
    """The solution passes every item, the fleet test included (MIG-2, CAP-2, MRTR-S4a)."""
    report = _gate(capstone.SOLUTION)
    assert report.passed, report
    assert [item.status for item in report.items] == ["pass"] * 7 + ["skip"]
    assert "capstone-a → capstone-b → capstone-a" in report.item(capstone.TITLES[6]).why


def test_unported_scaffold_fails_the_gate():
    """The 2025-11-25 scaffold fails item 1, and nothing else is checked (MIG-1)."""
    report = _gate(capstone.SCAFFOLD, fleet=False)
    assert not report.passed
    assert report.failed == capstone.TITLES
    assert "returns a LegacyServer" in report.item(capstone.TITLES[0]).why
    assert repr(report).endswith("✘ Not yet: 8 of 8 items checked fail.")


@pytest.mark.slow
def test_state_in_memory_fails_on_the_fleet(tmp_path):
    """Keeping the first answer in process memory passes in one process and fails the fleet
    test, and the kit's check finds round 2 without requestState (MIG-2)."""
    report = _gate(_write(tmp_path, "memory.py", MEMORY_PORT))
    assert report.failed == [capstone.TITLES[5], capstone.TITLES[6]], report
    assert report.item(capstone.TITLES[3]).status == "pass"  # one process: it works
    assert "carries no requestState" in report.item(capstone.TITLES[5]).why
    fleet = report.item(capstone.TITLES[6]).why
    assert "book_table failed on the fleet (capstone-a → capstone-b → capstone-a" in fleet
    assert "kept in memory instead of requestState" in fleet


def test_asking_with_sampling_fails(tmp_path):
    """Asking for the size with sampling (the wrong capability) fails order_pizza's item and
    says the original asked with a form (MRTR-S7)."""
    report = _gate(_write(tmp_path, "sampling.py", SAMPLING_PORT), fleet=False)
    why = report.item(capstone.TITLES[2]).why
    assert report.item(capstone.TITLES[2]).status == "fail"
    assert "asks for the client capability sampling" in why and "use ctx.form" in why
    assert report.item(capstone.TITLES[3]).status == "pass"


def test_forgetting_the_first_answer_fails(tmp_path):
    """No requestState at all: book_table asks for the people forever (MIG-2)."""
    report = _gate(_write(tmp_path, "forgetful.py", FORGETFUL_PORT), fleet=False)
    assert capstone.TITLES[3] in report.failed
    assert "never finished" in report.item(capstone.TITLES[3]).why


def test_a_broken_file_is_reported_not_raised(tmp_path):
    report = _gate(_write(tmp_path, "broken.py", "def build_server():\n    return 1 / 0\n"))
    assert "ZeroDivisionError" in report.item(capstone.TITLES[0]).why
    assert report.failed == capstone.TITLES


def test_gate_takes_the_cell_that_defines_build_server(tmp_path, monkeypatch):
    """In the notebook the gate gets ``build_server`` itself and saves its cell to a file."""
    module = capstone.load_module(capstone.SOLUTION)
    assert capstone.cell_source(module.build_server) == SOLUTION_SOURCE
    report = asyncio.run(capstone.gate(module.build_server, fleet=False, official=False))
    assert report.passed, report
    assert report.target == "the cell that defines build_server()"


def _cells() -> list[dict[str, object]]:
    return json.loads(NOTEBOOK.read_text())["cells"]


def test_notebook_stub_is_the_scaffold():
    """The exercise cell holds the unported scaffold under its ``# %load`` line, and the
    solution file it loads is the one the gate passes."""
    stubs = [
        "".join(cell["source"])  # type: ignore[arg-type]
        for cell in _cells()
        if "exercise-stub" in cell.get("metadata", {}).get("tags", [])  # type: ignore[union-attr]
    ]
    assert len(stubs) == 1
    first, _, rest = stubs[0].partition("\n")
    assert first == "# %load solutions/04_pizzeria.py"
    assert rest.strip() == capstone.SCAFFOLD.read_text().strip()


def test_notebook_calls_the_gate_in_its_own_cell():
    sources = ["".join(cell["source"]) for cell in _cells() if cell["cell_type"] == "code"]  # type: ignore[arg-type]
    gates = [s for s in sources if "capstone.gate(" in s]
    assert gates and all(s.strip().startswith("await capstone.gate(") for s in gates)


@pytest.mark.slow
def test_served_file_answers_like_in_process(tmp_path):
    """``python -m mrtr_kit.lessons.capstone PATH`` serves the file (what the fleet starts)."""
    from mrtr_kit.client import McpClient
    from mrtr_kit.fleet import start_processes

    fleet = start_processes({"one": capstone.serve_command(capstone.SOLUTION, "one")})
    try:

        async def run() -> str:
            user = capstone._answers(size="small")
            transport = RoundRobin(fleet.urls).transport()
            async with McpClient(FRONT_URL, elicitation=user, transport=transport) as client:
                return capstone._text(await client.call_tool("order_pizza", capstone.PIZZA))

        assert asyncio.run(run()) == capstone.pizza_text("small")
    finally:
        fleet.stop()
