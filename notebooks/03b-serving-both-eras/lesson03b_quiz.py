"""Lesson 03b's self-check questions (the rules: mrtr_course/quizzes.py's docstring).

One quiz at the lesson's end (``03b``): what a fleet does to each era when an instance dies, what
replaced URL mode's completion signal, and what a ported client callback returns. Each wrong
option is a belief a learner who has done lesson 03 can still hold.
"""

from __future__ import annotations

from mrtr_course.quizzes import Option, Quiz, _q, _right

# "Spot the bug": a 2025-11-25 client handler ported to the MRTR loop's callback.
PORTED_CALLBACK = """\
def answer_form(params, ctx):
    answer = user.ask(params.message, params.requested_schema)
    result = {"action": "accept", "content": answer.values}
    return {"jsonrpc": "2.0", "id": ctx.key, "result": result}"""

END = Quiz(
    "03b",
    "Serving both eras",
    (
        _q(
            "Two instances share one state key and sit behind sticky routing. A 2025-11-25 "
            "client and a 2026-07-28 client each wait on their first question, both served by "
            "instance 1. Instance 1 dies. What happens next?",
            Option(
                "Both calls carry on: the other instance has the same key, so it opens both.",
                "The key opens a 2026-07-28 requestState; a 2025-11-25 call is a suspended "
                "handler and a session in instance 1's memory, which no key brings back "
                "(MRTR-0 MUST, MIG-2 step).",
            ),
            _right(
                "The 2025-11-25 client gets 404 for its session and starts again from "
                "`initialize`; the 2026-07-28 retry goes to instance 2 and completes.",
                "The legacy call lived in one process; the modern round carries everything "
                "in the request and its requestState, so any instance serves it "
                "(MRTR-0 MUST, MIG-2 step).",
            ),
            Option(
                "Both calls are lost: a dead instance loses whatever it was serving.",
                "Only the call that waited in the process is lost. Between two MRTR rounds "
                "the server holds nothing, so nothing dies with it (MRTR-0 MUST).",
            ),
            Option(
                "Sticky routing moves the 2025-11-25 session to instance 2, which goes on "
                "waiting for the answer.",
                "Sticky routing sends a session's requests to the instance holding it; when "
                "that one is gone there is nothing to move: the session and its waiting "
                "handler lived only there, and instance 2 answers 404. Asking with MRTR "
                "removes that tie (MRTR-0 MUST).",
            ),
        ),
        _q(
            "A 2026-07-28 tool sends the user to a sign-in page in URL mode. What tells the "
            "server that the user has finished there?",
            Option(
                "A `notifications/elicitation/complete` naming the `elicitationId`.",
                "Both are gone in 2026-07-28 (ELIC-11 note): there is no id to name and no "
                "notification to wait for (MIG-7 step).",
            ),
            Option(
                "The server answers -32042 until the page is done, and the client retries.",
                "-32042 is no longer sent (ERR-2 MUST NOT / SHOULD); the question goes in an "
                "input_required like any other (ELIC-11 note).",
            ),
            _right(
                "Nothing on the wire: after consent the client retries with `accept`, and the "
                "server checks its own records; if the page is not done yet it can answer "
                '`input_required` again, with only a state ("still waiting").',
                "accept means the user agreed to go (ELIC-9 note); the server decides from "
                "its records and may return a state-only result (MRTR-S3 MAY, MRTR-S6 MUST), "
                "which the client may retry at once (MRTR-C1 MUST / MAY).",
            ),
        ),
        _q(
            "Spot the bug in this port of a 2025-11-25 client handler to the MRTR loop's callback.",
            Option(
                "`ctx.key` is the wrong id: it should be the id of the server's request.",
                "There is no server request any more, so there is no id to answer (MIG-6 "
                "(KIT)); the key only says where the loop puts the answer.",
            ),
            _right(
                "It returns a JSON-RPC response; the callback returns the `ElicitResult` "
                "itself, which the loop sends in the retry's `inputResponses`.",
                "The client drops its handler for pushed requests; answers travel in the "
                "retry under the question's key (MIG-6 step, MRTR-C6 note).",
            ),
            Option(
                "It should POST the response itself, on the session, as before.",
                "A 2026-07-28 client has no session and posts no responses: the loop sends "
                "the retry (MIG-6 step, MRTR-C5 note).",
            ),
            Option(
                "Nothing: a client may answer either way.",
                "An inputResponses value is an ElicitResult; the kit's loop refuses anything "
                "else before sending (MRTR-C6 note, ELIC-14 MUST NOT / SHOULD).",
            ),
            code=PORTED_CALLBACK,
        ),
    ),
)

QUIZZES = (END,)
