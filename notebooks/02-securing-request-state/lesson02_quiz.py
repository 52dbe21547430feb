"""Lesson 02's self-check questions, one quiz after each main section (the rules:
mrtr_course/quizzes.py's docstring). A "predict the output" question's right answer is computed
by running its code in tests/course/test_quiz.py, so it cannot drift from what Python prints."""

from __future__ import annotations

from mrtr_course.quizzes import Option, Quiz, _q, _right

FORGERY = Quiz(
    "02",
    "Forging a plain state",
    (
        _q(
            "A refund server keeps `approved_cents` in a plain base64 JSON `requestState`. "
            "What is wrong with that?",
            Option(
                "Nothing: clients must not alter `requestState`, so the server can trust it.",
                "That rule binds honest clients (MRTR-C2). The server must treat requestState "
                "as attacker-controlled input (MRTR-S4).",
            ),
            _right(
                "The client can change the amount: state that affects business logic must "
                "be integrity-protected, and state that fails verification rejected.",
                "State that can affect authorisation, resource access or business logic is "
                "integrity-protected (HMAC, AEAD, signed token), and failures are rejected "
                "(MRTR-S4a).",
            ),
            Option(
                "Only that the client can read it; encryption alone would fix it.",
                "Confidentiality is not what the spec requires here (SEC-8); what stops the "
                "forgery is integrity protection with rejection (MRTR-S4a).",
            ),
        ),
        _q(
            "When may a server leave `requestState` unprotected?",
            Option(
                "When the server only listens on 127.0.0.1.",
                "Where the server listens changes nothing: state is attacker-controlled "
                "input however it arrives (MRTR-S4).",
            ),
            Option(
                "When the client is the server's own first-party app.",
                "The server must treat incoming requestState as attacker-controlled "
                "whoever the client claims to be (MRTR-S4).",
            ),
            _right(
                "When tampering with it can at worst make the request fail.",
                "Integrity protection may be skipped only then (MRTR-S4b); plaintext state "
                "is still validated like any client input (SEC-1).",
            ),
        ),
    ),
    section="2",
)

SEALING = Quiz(
    "02",
    "HMAC and AEAD",
    (
        _q(
            "An HMAC-sealed `requestState` reaches the client. What can the client still do?",
            Option(
                "Change a byte of it without the server noticing.",
                "Changing any byte breaks the tag, and the server rejects the state (SEC-2).",
            ),
            _right(
                "Read what is inside it.",
                "Integrity is not confidentiality: do not put secrets or data the user must "
                "not see in it without encryption such as AEAD (SEC-8).",
            ),
            Option(
                "Mint a new state the server accepts.",
                "Without the server's key nobody can compute a valid tag; a state that "
                "verifies was issued by the server (MRTR-S4a).",
            ),
        ),
        _q(
            "Why does `unseal` compare the tags with `hmac.compare_digest(expected, tag)` "
            "instead of `expected == tag`?",
            Option(
                "`==` raises an error when the two tags differ in length.",
                "`==` on bytes of different lengths is simply False; a cut tag fails either "
                "way. The difference is time, not errors (SEC-2).",
            ),
            _right(
                "`==` may stop at the first byte that differs, so its time tells an attacker "
                "how much of a guessed tag was right.",
                "Tags are compared in constant time: part of SEC-2, not a kit choice; "
                "`hmac.compare_digest` does it in Python.",
            ),
            Option(
                "`compare_digest` also checks that the key id is one the server knows.",
                "It compares two byte strings and nothing else; the key id is looked up in "
                "the key ring before (KIT).",
            ),
        ),
    ),
    section="4",
)

QUIZZES = (FORGERY, SEALING)
