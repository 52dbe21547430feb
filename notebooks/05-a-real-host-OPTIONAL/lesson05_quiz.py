"""Lesson 05's self-checks, after section 1 (which hosts speak MRTR) and section 3 (the
server's view). The rules: mrtr_course/quizzes.py's docstring."""

from __future__ import annotations

from mrtr_course.quizzes import Option, Quiz, _q, _right

SAME_ID_RETRY = """// round 1 (id 1) was answered input_required: asks "details", state "eyJ...Q"
{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
 "params": {"_meta": {...}, "name": "book_table", "arguments": {"restaurant": "Luigi's"},
            "inputResponses": {"details": {"action": "decline"}},
            "requestState": "eyJ...Q"}}"""

HOSTS = Quiz(
    "05",
    "Which hosts speak MRTR",
    (
        _q(
            "A host that speaks only 2025-11-25 calls a kit server that offers 2026-07-28 "
            "only. What does it get?",
            Option(
                "The server falls back to 2025-11-25 and sends `elicitation/create` requests.",
                "A 2026-07-28 server sends no requests to the client (MIG-1); it does not "
                "speak a version it does not offer.",
            ),
            _right(
                "The error `-32022`, listing the versions the server offers.",
                "A request naming a version the server lacks gets -32022 with the server's "
                "versions (VER-1, ERR-1).",
            ),
            Option(
                "An `input_required` result it cannot read, which it then ignores.",
                "The server never gets that far: the version is checked first, and the answer "
                "is the -32022 error (VER-1).",
            ),
        ),
        _q(
            "Your host is not in the table's first rows, and it cannot call your server. What "
            "do you conclude first?",
            Option(
                "The server is broken: every MCP host can call every MCP server.",
                "A server that offers 2026-07-28 only is right to refuse an older version (VER-1).",
            ),
            _right(
                "The host may not speak 2026-07-28 yet: check its release notes.",
                "Hosts adopt the revision at their own pace; one that sends an older version "
                "gets -32022 (VER-1), which says so.",
            ),
        ),
    ),
    section="1",
)

SERVER_VIEW = Quiz(
    "05",
    "The server's view",
    (
        _q(
            "Spot the bug in this retry of `book_table`.",
            _right(
                "It reuses id 1, the id of round 1.",
                "A retry is a new request and must use a different JSON-RPC id (MRTR-C3).",
            ),
            Option(
                "It declines: a retry must accept the form.",
                "Declining is an answer, not a failure: the client still retries with "
                '{"action": "decline"} (MRTR-C8).',
            ),
            Option(
                "It sends the `requestState` back: only round 1 may carry it.",
                "The client must send the state back exactly as received (MRTR-C2).",
            ),
            code=SAME_ID_RETRY,
        ),
        _q(
            "An attacker changes one character of a `requestState`. What do the attacker and "
            "the server's operator each learn?",
            Option(
                "Both see the reason, such as a bad signature, so the attacker can fix it.",
                "The client gets one fixed error for every reason (KIT); only the operator's "
                "trace says why.",
            ),
            _right(
                "The attacker gets `Invalid requestState`; the operator's trace says why.",
                "The state is rejected (MRTR-S4a) with the same error whatever the reason "
                "(KIT); the trace keeps the reason, never the key or the contents.",
            ),
            Option(
                "Neither: the server accepts the state and ignores the changed character.",
                "A state that fails verification must be rejected (MRTR-S4a).",
            ),
        ),
    ),
    section="3",
)

QUIZZES = (HOSTS, SERVER_VIEW)
