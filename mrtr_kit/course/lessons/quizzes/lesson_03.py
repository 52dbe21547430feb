"""Lesson 03's self-check questions (see the package's docstring for the rules)."""

from __future__ import annotations

from . import Option, Quiz, _q, _right

LESSON_03 = Quiz(
    "03",
    "Migrating from server-initiated requests",
    (
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
            "Round 3 needs the date the user gave in round 1. The round-3 retry carries "
            "only the round-3 answer. Where does the date come from?",
            Option(
                "The client re-sends all earlier answers in `inputResponses`.",
                "Answers for previous rounds are not re-sent; the client answers the keys of "
                "the latest inputRequests only (MRTR-C6).",
            ),
            Option(
                "From the server's session for this client.",
                "There are no sessions in 2026-07-28 (CORE-9).",
            ),
            _right(
                "From the `requestState` the server returned in round 2, which folded the date in.",
                "The server carries earlier answers in requestState (MRTR-C6, MIG-2); the "
                "client echoes it exactly (MRTR-C2).",
            ),
        ),
        _q(
            "The ported tool needs a form, but this request's `clientCapabilities` declare "
            "no `elicitation`. What does the server answer?",
            Option(
                "`input_required` with the form anyway; the client may manage.",
                "A server must not send an input request of a kind the client did not "
                "declare in this request (MRTR-S7).",
            ),
            _right(
                "Error -32021 with `data.requiredCapabilities`, HTTP 400.",
                "A request that cannot be processed without an undeclared capability gets "
                "-32021 naming it (CAP-2, MIG-4).",
            ),
            Option(
                "It uses the capabilities the client declared in `initialize`.",
                "There is no initialize in 2026-07-28, and a server must not infer "
                "capabilities from earlier requests (CAP-1, CORE-8).",
            ),
        ),
        _q(
            "A 2025-11-25 client waited for `notifications/elicitation/complete` after a "
            "URL-mode sign-in. What does a 2026-07-28 client do instead?",
            Option(
                "Waits for the same notification on the retry's SSE stream.",
                "notifications/elicitation/complete is gone; the retry replaces it (ELIC-11, "
                "MIG-7).",
            ),
            _right(
                'After the user\'s consent, retries with `{"action": "accept"}` at once, '
                "and offers a manual retry.",
                "accept means the user agreed to go; the server decides from requestState "
                "whether the step finished, and the client offers retry and cancel "
                "(ELIC-9, ELIC-10, MIG-7).",
            ),
            Option(
                "Polls `server/discover` until the sign-in shows up.",
                "server/discover never returns input_required and knows nothing of a call; "
                "completion is learned on the retry (DISC-4, ELIC-9).",
            ),
        ),
    ),
)

QUIZZES = (LESSON_03,)
