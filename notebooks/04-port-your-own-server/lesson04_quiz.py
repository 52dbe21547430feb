"""Lesson 04's self-check, after its checklist and before the port (the rules:
mrtr_course/quizzes.py's docstring). The predict-the-output question's right answer is computed by
``tests/course/test_lesson_04.py``, which runs the code the question shows."""

from __future__ import annotations

from mrtr_course.quizzes import Option, Quiz, _q, _right

SCAFFOLD_GATE = """report = await capstone.gate("pizzeria_2025.py", fleet=False)
print(repr(report).splitlines()[-1])"""

MEMORY_PORT = """PEOPLE = {}  # module level

def book_table(ctx):
    date = ctx.arguments["date"]
    if date not in PEOPLE:
        party = ctx.form("people", f"How many people on {date}?", PEOPLE_FORM)
        if party.needs_asking:
            return party.ask()
        PEOPLE[date] = party.content["people"]
    slot = ctx.form("time", f"What time on {date}, for {PEOPLE[date]}?", TIME_FORM)
    ..."""

LESSON_04 = Quiz(
    "04",
    "Before the port",
    (
        _q(
            "The gate runs on the unported scaffold. What does this cell print?",
            Option(
                "✘ Not yet: 8 of 8 items checked fail.",
                "Items 2 to 8 are not checked while item 1 fails: they wait (·) and are not "
                "counted as failures (KIT).",
            ),
            Option(
                "✘ Not yet: 1 of 8 items checked fails.",
                "Only item 1 was checked; the other seven wait on it and are not counted as "
                "checked (KIT).",
            ),
            _right(
                "✘ Not yet: 1 of 1 item checked fails (7 not checked until item 1 passes).",
                "A LegacyServer fails item 1 (MIG-1), and the gate checks nothing that builds "
                "on it: it counts the one item it checked (KIT).",
            ),
            code=SCAFFOLD_GATE,
        ),
        _q(
            "Spot the bug: this port of `book_table` books a table in this kernel (item 4 "
            "passes). Why does it fail item 6, which sends round 3 to a second copy of the server?",
            Option(
                "The two instances have different state keys, so round 2's state is refused.",
                "The gate gives the second copy the first one's key (KIT); and this port does "
                "not put the number of people in its state at all.",
            ),
            _right(
                "Round 3 reaches a copy whose `PEOPLE` is empty.",
                "What a later round needs travels in requestState (MIG-2); a dict in one "
                "server is invisible to another copy or instance (CORE-8, CORE-9).",
            ),
            Option(
                "The dict is keyed by date, so two users booking one date collide.",
                "A real bug too, but not what item 6 sees: it fails with one user, because "
                "round 3 reaches another copy (CORE-9).",
            ),
            code=MEMORY_PORT,
        ),
        _q(
            "Why does the gate give its two instances the same state key?",
            Option(
                "So that the client can read the number of people in the state.",
                "The client must not inspect or depend on the state (MRTR-C2); a shared key "
                "is for the servers.",
            ),
            _right(
                "So that an instance can verify and open a `requestState` the other sealed.",
                "Each round may reach any instance, which must accept a state sealed by "
                "another and reject a forged one (MRTR-S4a, CORE-9).",
            ),
            Option(
                "So that the round robin sends each retry back to the instance that asked.",
                "The round robin ignores the state: round 2 goes to the other instance on "
                "purpose, which is what item 7 tests (KIT).",
            ),
        ),
    ),
    section="2",
)

QUIZZES = (LESSON_04,)
