"""Lesson 00's self-check questions (see the package's docstring for the rules)."""

from __future__ import annotations

from . import Option, Quiz, _q, _right

LESSON_00 = Quiz(
    "00",
    "Why MRTR",
    (
        _q(
            "A 2025-11-25 server runs as two instances behind a round-robin load balancer. "
            "A tool on instance A sends the client an `elicitation/create` request and waits. "
            "The client POSTs its answer, and the balancer delivers that POST to instance B. "
            "What happens?",
            Option(
                "B forwards the answer to A, which resumes the tool.",
                "Nothing in the protocol moves an answer between instances. The waiting "
                "handler lives in A's memory, so the answer had to reach A itself: the old "
                "pattern needs sticky routing or a shared store (MIG-2).",
            ),
            _right(
                "B has no waiting handler for it: the answer is lost, and the tool on A "
                "waits until it gives up.",
                "In the push style the handler awaits the answer in the middle of its code, "
                "in one process. An answer that lands on another instance has nobody to "
                "resume (MIG-2). MRTR removes the wait: the server returns input_required "
                "and any instance serves the retry (MRTR-0).",
            ),
            Option(
                "B runs the tool again from the start, with the answer.",
                "In the push style the answer is a JSON-RPC response to the server's "
                "request, not a new call: B has no call to run. Re-running from the top "
                "with the answers is what an MRTR retry does (MIG-2).",
            ),
        ),
        _q(
            "In 2026-07-28, a tool needs the user's input. What does the server do?",
            Option(
                "It sends the client an `elicitation/create` request on the response stream.",
                "Servers never initiate JSON-RPC requests in 2026-07-28, on any stream "
                "(CORE-6, HTTP-21).",
            ),
            Option(
                "It keeps the HTTP response open until the user has answered.",
                "The input_required result is the final response of its request; nothing "
                "follows it on that stream (HTTP-22).",
            ),
            _right(
                'It returns a result with `resultType: "input_required"` that lists what '
                "it needs; that request is then over.",
                "A server that needs elicitation, sampling or roots uses MRTR: it returns an "
                "InputRequiredResult with inputRequests and maybe a requestState (MRTR-0, "
                "RT-1).",
            ),
            Option(
                "It answers with error -32042, URL elicitation required.",
                "-32042 is gone: servers must not emit it; a URL-mode request goes inside "
                "input_required instead (ERR-2, ELIC-11).",
            ),
        ),
        _q(
            "Why can any instance of an MRTR server handle the next round of a call?",
            _right(
                "The retry carries everything needed: the same params, the answers in "
                "`inputResponses`, and the server's `requestState` echoed back.",
                "State that spans requests travels in an identifier the client sends each "
                "time; for MRTR that is requestState (CORE-9). Every request stands alone "
                "(CORE-8).",
            ),
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
            Option(
                "The server remembers the client's capabilities from the first round.",
                "A server must not derive capabilities from earlier requests: every round "
                "declares its own, and the server checks them again (CORE-8, CAP-4).",
            ),
        ),
    ),
)

QUIZZES = (LESSON_00,)
