"""Lesson 03c's self-check questions (the rules: mrtr_course/quizzes.py's docstring).

One quiz at the lesson's end (``03c``): where an earlier answer lives between rounds, when a
port that acts "after the last answer" acts twice, and what key makes a side effect happen once.
Each wrong option is a belief a learner who has ported one tool can still hold.
"""

from __future__ import annotations

from mrtr_course.quizzes import Option, Quiz, _q, _right

END = Quiz(
    "03c",
    "Porting practice",
    (
        _q(
            "A port of `rent_bike` keeps the day in a module-level dict, `DAYS[shop] = day`, "
            "and works on one process. Three instances sit behind round robin. What happens "
            "when round 3 (the hours) lands on another instance?",
            Option(
                "Nothing goes wrong: every instance imports the same module, so they share `DAYS`.",
                "Each process has its own copy of a module's globals; what one instance stored "
                "is not in another's memory. What earlier rounds learned travels in "
                "`requestState` (MIG-2 step).",
            ),
            Option(
                "Nothing goes wrong: the client sends the day again with the hours.",
                "A retry answers only the latest questions; earlier answers are not sent again, "
                "the server keeps them in its state (MRTR-C6 note).",
            ),
            _right(
                "That instance has no day for the shop: the port asks for the day again, or "
                "fails; the day belongs in the state returned with the hours question.",
                "MIG-2 step: each earlier answer still needed moves into `requestState`, which "
                "every instance holding the key can open; process memory is one instance's.",
            ),
        ),
        _q(
            "`open_ticket` files the ticket after the accepted answer, with no key. When can "
            "one call file two tickets?",
            _right(
                "When the final response is lost and the client sends the final retry again, "
                "with the same answers and state, under a new id.",
                "HTTP-26 MUST: a client that still wants the answer re-sends the request; the "
                "handler runs once per round that arrives, the repeat too (MIG-3 step). File under "
                "a key sealed in the state, so the repeat gets the same ticket.",
            ),
            Option(
                "Never: the code after the last answer runs once per call.",
                "It runs once per request that reaches the server, and the last request can "
                "arrive twice (HTTP-26 MUST, MIG-3 step).",
            ),
            Option(
                "Only when an attacker replays the state; the HMAC on the state stops that.",
                "The repeat comes from an honest client, and its state is genuine: integrity "
                "(MRTR-S4a MUST) says who wrote a state, not that it is used once.",
            ),
        ),
        _q(
            "The fix files the ticket with `key=...`. Which key makes one ticket per call, "
            "and two tickets for two calls?",
            Option(
                "The JSON-RPC id of the request.",
                "Every retry has a new id (MRTR-C3 MUST), the repeated final retry too: each "
                "would file again.",
            ),
            Option(
                "A hash of the title.",
                "Two calls about the same title would share one ticket, and the second user "
                "would get the first one's: the key must belong to the call, which is what a "
                "random value in the state gives (MIG-3 step).",
            ),
            _right(
                "A random value made on round 1 and carried in the sealed `requestState`.",
                "It is the same on every round of one call, the repeat included, and "
                "different for each call; the client cannot change it (MRTR-S4a MUST, MIG-3 step).",
            ),
        ),
    ),
)

QUIZZES = (END,)
