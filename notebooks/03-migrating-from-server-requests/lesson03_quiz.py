"""Lesson 03's self-check questions (the rules: mrtr_course/quizzes.py's docstring).

Two section quizzes: ``03.2`` after sections 1 and 2 (why the push style breaks, the port) and
``03.3`` after section 3 (the traps and the capability gate). The predict-the-output question's
right answer is computed by running its code in ``tests/course/test_lesson_03.py``.
"""

from __future__ import annotations

from mrtr_course.quizzes import Option, Quiz, _q, _right

# "Predict the output": tests/course/test_lesson_03.py runs this and compares the printed line.
PREDICT_CAPS = """\
from mrtr_kit.protocol.models import ClientCapabilities

caps = ClientCapabilities.model_validate({"elicitation": {"url": {}}})
print(caps.supports_elicitation("form"))"""

# "Spot the bug in this retry": round 2 answered input_required asking "room", with state S2.
STALE_STATE_RETRY = """\
round 1 -> input_required, asks "dates", requestState "S1"
round 2 -> input_required, asks "room",  requestState "S2"
round 3:
{"id": 3, "method": "tools/call",
 "params": {"_meta": {...}, "name": "plan_trip", "arguments": {"city": "Lisbon"},
            "inputResponses": {"room": {"action": "accept", "content": {"room": "double"}}},
            "requestState": "S1"}}"""

SECTION_2 = Quiz(
    "03",
    "Why the push style breaks, and the port",
    (
        _q(
            "Two 2025-11-25 instances share session ids. Behind round robin, the answer to a "
            "tool's question reaches the other instance. What happens?",
            Option(
                "It works: the session is shared, so either instance can take the answer.",
                "The session says who the client is; the answer must reach the process whose "
                "tool is waiting, and nothing carries it there (MRTR-0, MIG-2).",
            ),
            _right(
                "The other instance accepts the answer and drops it; the call times out.",
                "Only sticky routing, or a shared store that forwards the answer to the waiting "
                "process, would save it; MRTR removes the need (MRTR-0, MIG-2).",
            ),
            Option(
                "The other instance answers `404 Session not found`.",
                "That is the failure without shared session ids, one step earlier, at "
                "`notifications/initialized`, as the kit's legacy server does it (KIT).",
            ),
        ),
        _q(
            "How does `answer = await ctx.elicit(...)` in a 2025-11-25 tool become MRTR?",
            Option(
                "Keep the `await`, and send the request on the call's SSE stream.",
                "A server must not send JSON-RPC requests on any stream in 2026-07-28 "
                "(HTTP-21, MIG-1).",
            ),
            _right(
                "Return `input_required` with a keyed request; on re-entry read the answer "
                "under that key, with earlier answers carried in `requestState`.",
                "Each await becomes a return of input_required, and the handler reads "
                "inputResponses[key] when it runs again; what earlier rounds gathered moves "
                "into requestState, protected (MIG-2).",
            ),
            Option(
                "Keep the `await`, and store the suspended handler in a shared database.",
                "A suspended coroutine cannot be stored: the MRTR handler is re-entrant, "
                "and cross-round state lives in requestState or an explicit store keyed "
                "from it (MIG-2).",
            ),
        ),
        _q(
            "Spot the bug in this retry.",
            Option(
                "It answers only `room`; it must send the `dates` answer again.",
                "Answers for previous rounds are not re-sent: the server carries them in "
                "requestState (MRTR-C6).",
            ),
            Option(
                'It reuses `"name"` and `"arguments"`; a retry must change them.',
                "A retry repeats the original method, name and arguments (MRTR-C5).",
            ),
            _right(
                'It echoes round 1\'s state "S1", not the latest one, "S2".',
                "The retry sends back exactly the requestState of the latest result "
                "(MRTR-C2); S1 asked for the dates, so the server drops the room answer "
                "(MRTR-E3) and asks for the dates again.",
            ),
            code=STALE_STATE_RETRY,
        ),
    ),
    section="2",
)

SECTION_3 = Quiz(
    "03",
    "The traps of porting, and the capability gate",
    (
        _q(
            "The legacy tool places a hotel hold before its first question. Ported as it "
            "is, over a three-round call, what happens?",
            _right(
                "Every round runs the handler from the top, so every round places another hold.",
                "A handler may now run N times for one logical call: make pre-input side "
                "effects idempotent or move them after the last round (MIG-3).",
            ),
            Option(
                "One hold: the server remembers that it placed it in round 1.",
                "An MRTR server keeps nothing between requests unless it is in the request "
                "(CORE-8, CORE-9); the hold code simply runs again.",
            ),
            Option(
                "One hold: the client sends round 1 only once.",
                "The retries are new requests for the same method and params (MRTR-C5); the "
                "server runs the handler on each, from the top (MIG-3).",
            ),
        ),
        _q(
            "Predict the output: a client declares only URL-mode elicitation.",
            Option(
                "True",
                "Form mode needs `elicitation.form`, or an empty `elicitation: {}`; a server "
                "never uses a mode the client did not declare (ELIC-2 MUST NOT): a client that "
                "names only `url` cannot show forms (CAP-2, MRTR-S7).",
            ),
            _right(
                "False",
                "Form mode needs `elicitation.form`, or an empty `elicitation: {}`; a server "
                "never uses a mode the client did not declare (ELIC-2 MUST NOT): this client "
                "declared only `url`, so a form tool refuses it with -32021 (CAP-2).",
            ),
            Option(
                "An error: `url` is not a capability.",
                "`elicitation.url` is the URL-mode capability, a valid declaration (CAP-3).",
            ),
            code=PREDICT_CAPS,
        ),
        _q(
            "Round 1 declared `elicitation.form` and got a form. The retry declares no "
            "capabilities, and the tool needs one more form. What does the server answer?",
            Option(
                "`input_required` with the form: round 1 showed the client can show forms.",
                "A server must not rely on a capability the current request does not declare, "
                "nor infer it from earlier requests (CAP-1).",
            ),
            _right(
                "Error -32021 with `data.requiredCapabilities`, HTTP 400.",
                "Capabilities are checked on every round: the retry carries its own (CAP-4), "
                "and a request that needs an undeclared one gets -32021 naming it (CAP-2).",
            ),
            Option(
                "A complete result without asking, using a default answer.",
                "Inventing the user's answer is not a refusal the client can act on; the "
                "missing capability gets -32021 (CAP-2, MIG-4).",
            ),
        ),
    ),
    section="3",
)

QUIZZES = (SECTION_2, SECTION_3)
