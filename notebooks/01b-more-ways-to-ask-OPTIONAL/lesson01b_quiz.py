"""Lesson 01b's self-check questions, one quiz after each group of sections (the rules:
mrtr_course/quizzes.py's docstring).

The "predict the output" question's code runs in tests/course/test_quiz.py, which checks that
the right option is what it prints, so the two cannot drift apart."""

from __future__ import annotations

from mrtr_course.quizzes import Option, Quiz, _q, _right

# A retry with one bug: round 2's requestState is not echoed (MRTR-C2).
FORGOTTEN_STATE_RETRY = """\
# round 2 of book_table came back input_required, asking for "confirm",
# with "requestState": "aead1.k0.Q2x…"
retry = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
         "params": {"_meta": meta(FORMS), "name": "book_table",
                    "arguments": {"restaurant": "Luigi's"},
                    "inputResponses": {"confirm": {"action": "accept",
                                                   "content": {"ok": True}}}}}"""

# After sections 1 and 2: the retry by hand and the form subset.
LESSON_01B_2 = Quiz(
    "01b",
    "The retry and the form",
    (
        _q(
            "Spot the bug in this retry of round 2.",
            Option(
                "Its id must be round 1's id, so the server finds the call again.",
                "The opposite: each retry needs a new id (MRTR-C3); the server finds the "
                "call's progress in the requestState, not in the id.",
            ),
            _right(
                "The `requestState` of round 2 is missing: the server has lost the details.",
                "A requestState that came with the result goes back exactly as received "
                "(MRTR-C2); it is where this server keeps round 1's details.",
            ),
            Option(
                "It must send round 1's `details` answer again alongside `confirm`.",
                "Only the latest inputRequests are answered; earlier answers are not re-sent, "
                "the server carries them in requestState (MRTR-C6).",
            ),
            code=FORGOTTEN_STATE_RETRY,
        ),
        _q(
            "Which field cannot go into a form's `requestedSchema`?",
            Option(
                '`"tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}}`',
                "A multi-select of string choices is in the spec's subset; its answer is a "
                "string array (ELIC-4).",
            ),
            _right(
                '`"address": {"type": "object", "properties": {"city": {"type": "string"}}}`',
                "The spec allows only a flat object of simple fields: nothing nests. The "
                "kit's server checks its own schemas against that subset before sending, a "
                "check of its own (ELIC-5 (KIT)).",
            ),
            Option(
                '`"when": {"type": "string", "format": "date", "default": "2026-09-01"}`',
                "A date string is in the subset, and every field may carry a default (ELIC-3).",
            ),
        ),
    ),
    section="2",
)

# After sections 3 to 5: missing answers, and what a decline asks of the tool.
LESSON_01B_5 = Quiz(
    "01b",
    "Missing answers, and a no",
    (
        _q(
            "Your `favourite_colour` tool asked for a colour. The retry carries "
            '`"colour": {"action": "decline"}`. What should the tool answer?',
            Option(
                "The colour question again, `input_required`: the user may change their mind.",
                "Allowed, but not what the user said: a server may ask again (MRTR-S8 MAY), "
                "and MRTR-E4 SHOULD is about an answer that is missing, not one that says no. "
                "The same question again ignores an explicit no; ask again only with a reason "
                "the user can act on.",
            ),
            _right(
                "A complete result that respects the no, e.g. the default theme.",
                "A decline is an explicit no (ELIC-6 note), and a server handles it (ELIC-8 "
                "MUST). Finishing here is the kit's choice (KIT): the spec also lets it ask "
                "again (MRTR-S8 MAY).",
            ),
            Option(
                'A complete result: "Colour choice cancelled."',
                "Cancel is a different answer: the form was dismissed without a choice (ELIC-6 "
                "note). Calling a decline a cancel tells the user the wrong thing; say they "
                "declined. Two of the kit's own ports said this until they were fixed.",
            ),
            Option(
                "An error (-32602, or a result with `isError`): the tool could not finish.",
                "A decline is an answer, not a fault of the request or of the tool: the server "
                "handles it with a normal result (ELIC-8 MUST, MRTR-C8 note).",
            ),
        ),
        _q(
            "A retry arrives without the answer the server needs. What does the server do?",
            _right(
                "Asks again: a new `input_required` for the missing key.",
                "Missing answers get a new InputRequiredResult, not an error (MRTR-E4).",
            ),
            Option(
                "Answers with JSON-RPC error -32602, invalid params.",
                "A missing answer is not a malformed request: the server asks again (MRTR-E4).",
            ),
            Option(
                "Caches round 1's result and sends it again.",
                "Nothing from an input_required result is cached (CACHE-2); the server builds "
                "a new one (MRTR-E4).",
            ),
        ),
    ),
    section="5",
)

# After sections 6 and 7: URL mode, sampling and roots.
LESSON_01B_7 = Quiz(
    "01b",
    "URL mode, sampling and roots",
    (
        _q(
            "The user agrees to go to a URL-mode sign-in page. When does the client retry?",
            Option(
                "When the user says the sign-in is finished, with the account name as content.",
                "The client never learns what happens on the page, and URL-mode accept has "
                "no content (ELIC-7, ELIC-9).",
            ),
            Option(
                "Never: the server sends a notification when the sign-in is done.",
                "That notification is gone in 2026-07-28: the retry replaces it (ELIC-11).",
            ),
            _right(
                'At once, with `{"action": "accept"}`: the server decides whether the step is '
                "done.",
                'accept means "the user agreed to go"; the server completes, waits, or asks '
                "again (ELIC-9).",
            ),
        ),
        _q(
            "A tool asks for your roots, and you refuse to share any. What does the client send?",
            _right(
                "Nothing: it does not retry, and the call ends on the client's side.",
                "Sampling and roots have no decline: a client that will not answer simply "
                "does not retry (MRTR-C8, ROOTS-4).",
            ),
            Option(
                'A retry with `{"action": "decline"}` under that key.',
                "decline and cancel are elicitation answers only; for roots the client just "
                "does not retry (MRTR-C8).",
            ),
            Option(
                "A JSON-RPC error response to the server's request.",
                "There is no server request to answer, and clients send no JSON-RPC "
                "responses (CORE-6, MRTR-C8).",
            ),
        ),
    ),
    section="7",
)

QUIZZES = (LESSON_01B_2, LESSON_01B_5, LESSON_01B_7)
