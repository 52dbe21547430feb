"""Lesson 00's self-check questions (the rules: mrtr_course/quizzes.py's docstring)."""

from __future__ import annotations

from mrtr_course.quizzes import Option, Quiz, _q, _right

# After section 1: why the push style loses its answer, and what would (and would not) fix it.
LESSON_00_1 = Quiz(
    "00",
    "An answer lost behind a load balancer",
    (
        _q(
            "A 2025-11-25 server runs as two instances behind a round-robin load balancer. "
            "A tool on instance A sends the client an `elicitation/create` request and waits. "
            "The client POSTs its answer, and the balancer delivers that POST to instance B. "
            "What happens?",
            Option(
                "B forwards the answer to A, which resumes the tool.",
                "Nothing in the protocol moves an answer between instances; only an added "
                "shared store or bus that forwards it would (MIG-2).",
            ),
            _right(
                "B has no waiting handler for it: the answer is lost, and the tool on A "
                "waits until it gives up.",
                "The handler awaits the answer mid-code, in one process: on another instance "
                "nobody resumes (MIG-2). With MRTR any instance serves the retry (MRTR-0).",
            ),
            Option(
                "B runs the tool again from the start, with the answer.",
                "The answer is a JSON-RPC response, not a new call: B has nothing to run. "
                "Re-running with the answers is what an MRTR retry does (MIG-2).",
            ),
        ),
        _q(
            "The two push-style instances already share the key that signs session ids, so "
            "both accept the session. What would make the tool work behind the balancer?",
            Option(
                "Nothing more: a shared session is enough, the answer was just late.",
                "B accepted both (202), yet the tool timed out: the waiting coroutine is in "
                "A's memory, and a session does not move it (MIG-2).",
            ),
            _right(
                "Sticky routing, or a shared store or message bus that forwards each answer "
                "to the process where the tool waits. With MRTR neither is needed.",
                "The answer must reach the waiting process: route it or forward it there (the "
                'spec\'s "shared storage layer"). MRTR removes the need (MIG-2, MRTR-0).',
            ),
            Option(
                "Nothing can: a push-style server never works with two instances.",
                "It can, with sticky routing or a forwarding store or bus; MRTR needs neither "
                "(MIG-2, MRTR-0).",
            ),
        ),
    ),
    section="1",
)

# After section 2: what an MRTR server does instead, and why any instance can serve a round.
LESSON_00_2 = Quiz(
    "00",
    "The same question with MRTR",
    (
        _q(
            "In 2026-07-28, a tool needs the user's input. What does the server do?",
            Option(
                "It sends the client an `elicitation/create` request on the response stream.",
                "Servers never initiate JSON-RPC requests in 2026-07-28, on any stream "
                "(CORE-6, HTTP-21).",
            ),
            _right(
                'It returns a result with `resultType: "input_required"` that lists what '
                "it needs; that request is then over.",
                "It returns an InputRequiredResult with inputRequests and maybe a "
                "requestState (MRTR-0, RT-1).",
            ),
            Option(
                "It keeps the HTTP response open until the user has answered.",
                "The input_required result is the final response of its request; nothing "
                "follows it on that stream (HTTP-22).",
            ),
        ),
        _q(
            "Why can any instance of an MRTR server handle the next round of a call?",
            Option(
                "The instances share a session, named by the `Mcp-Session-Id` header.",
                "2026-07-28 has no sessions: a modern server never mints or echoes "
                "Mcp-Session-Id (CORE-9, HTTP-20).",
            ),
            Option(
                "The load balancer pins each call to the instance that started it.",
                "MRTR needs no sticky routing: servers should not require connection "
                "reuse, and each round is an independent request (CORE-9).",
            ),
            _right(
                "The retry carries everything needed: the same params, the answers in "
                "`inputResponses`, and the server's `requestState` echoed back.",
                "State that spans requests travels in requestState, which the client sends "
                "back (CORE-9); every request stands alone (CORE-8).",
            ),
        ),
    ),
    section="2",
)

QUIZZES = (LESSON_00_1, LESSON_00_2)
