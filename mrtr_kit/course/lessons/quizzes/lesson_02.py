"""Lesson 02's self-check questions (see the package's docstring for the rules)."""

from __future__ import annotations

from . import Option, Quiz, _q, _right

LESSON_02 = Quiz(
    "02",
    "Securing requestState",
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
            "Mallory replays alice's HMAC-sealed approval as her own round 2, at once, for "
            "the same order. Which check stops it?",
            Option(
                "The HMAC tag.",
                "The tag is genuine: it proves the server issued the state, not to whom (MRTR-S5).",
            ),
            Option(
                "The short expiry.",
                "The replay is immediate, so the state is still fresh; expiry only limits "
                "how long a state can be replayed (MRTR-S5b).",
            ),
            _right(
                "The authenticated principal sealed inside the state.",
                "A state bound to the signed-in user is rejected when a different principal "
                "presents it (MRTR-S5a, SEC-3).",
            ),
            Option(
                "The request binding (method + digest of the params).",
                "Same tool, same order: the digest matches. Request binding stops a state "
                "used for a different request (MRTR-S5c).",
            ),
        ),
        _q(
            "Alice sends her own valid approval twice (a double click). Which measure keeps "
            "the second one from paying again?",
            _right(
                "A server-side record of spent states, checked before paying.",
                "Single use must be enforced server-side, e.g. a store of spent nonces until "
                "expiry (MRTR-S5d, SEC-7).",
            ),
            Option(
                "A shorter expiry.",
                "Principal, expiry and request binding alone do not give single use: both "
                "clicks arrive in time (MRTR-S5d).",
            ),
            Option(
                "Encrypting the state with AES-GCM.",
                "Encryption hides the claims (SEC-8), but the same valid ciphertext still "
                "verifies on every replay; single use is a server-side check (MRTR-S5d).",
            ),
        ),
        _q(
            "An HMAC-sealed `requestState` reaches the client. What can the client still do?",
            Option(
                "Change a byte of it without the server noticing.",
                "Changing any byte breaks the tag, and the server rejects the state (SEC-2).",
            ),
            Option(
                "Mint a new state the server accepts.",
                "Without the server's key nobody can compute a valid tag; a state that "
                "verifies was issued by the server (MRTR-S4a).",
            ),
            _right(
                "Read what is inside it.",
                "Integrity is not confidentiality: do not put secrets or data the user must "
                "not see in it without encryption such as AEAD (SEC-8).",
            ),
        ),
        _q(
            "When may a server leave `requestState` unprotected?",
            Option(
                "When the server only listens on 127.0.0.1.",
                "Where the server listens changes nothing: state is attacker-controlled "
                "input however it arrives (MRTR-S4).",
            ),
            _right(
                "When tampering with it can at worst make the request fail.",
                "Integrity protection may be skipped only then (MRTR-S4b); plaintext state "
                "is still validated like any client input (SEC-1).",
            ),
            Option(
                "When the client is the server's own first-party app.",
                "The server must treat incoming requestState as attacker-controlled "
                "whoever the client claims to be (MRTR-S4, CORE-13).",
            ),
        ),
    ),
)

QUIZZES = (LESSON_02,)
