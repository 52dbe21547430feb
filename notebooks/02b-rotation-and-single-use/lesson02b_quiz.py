"""Lesson 02b's self-check questions, one quiz after each main section (the rules:
mrtr_course/quizzes.py's docstring). The "predict the output" question's right answer is computed by
running its code in tests/course/test_quiz.py."""

from __future__ import annotations

from mrtr_course.quizzes import Option, Quiz, _q, _right

ROTATION = Quiz(
    "02b",
    "Rotating keys",
    (
        _q(
            "Instances A and B share the ring [k1]. You deploy [k2] to A, replacing k1, while B "
            "still has [k1]. What breaks?",
            Option(
                "Nothing: each token names its key id, so B looks k2 up.",
                "B can look up only the keys in its own ring; k2 is not there, so it rejects "
                "the state (KIT).",
            ),
            _right(
                "States A seals now are rejected by B, and states A sealed with k1 earlier are "
                "rejected by A.",
                "Every instance must open every key another may have sealed with, and the old "
                "key must open until its states expire: add, promote, retire (KIT).",
            ),
            Option(
                "Only the states already in clients' hands: new ones work everywhere.",
                "New states are sealed with k2, which B cannot open; a retry may land on any "
                "instance, since every request stands alone (CORE-8).",
            ),
        ),
        _q(
            "When may the old key leave the ring (phase 3, retire)?",
            Option(
                "As soon as every instance seals with the new key.",
                "States sealed with the old key are still in clients' hands and still in "
                "time: they would be rejected (KIT).",
            ),
            _right(
                "Once the longest state lifetime (TTL plus clock skew) has passed since the "
                "last instance promoted the new key.",
                "By then every state the old key sealed has expired (MRTR-S5b), so no retry "
                "needs it (KIT).",
            ),
        ),
    ),
    section="1",
)

SPEND_CODE = """import sqlite3
a = sqlite3.connect("ledger.sqlite")  # a new file
b = sqlite3.connect("ledger.sqlite")
a.execute("CREATE TABLE spent (jti TEXT PRIMARY KEY)")

def spend(db, jti):
    cursor = db.execute("INSERT INTO spent (jti) VALUES (?) ON CONFLICT DO NOTHING", (jti,))
    db.commit()
    return cursor.rowcount == 1

print(spend(a, "x"), spend(b, "x"), spend(a, "y"))"""

SINGLE_USE = Quiz(
    "02b",
    "Single use",
    (
        _q(
            "Alice's valid approval arrives twice at once (a double click), at instances A "
            "and B. Which measure keeps the second one from paying again?",
            Option(
                "A record of spent states, checked before paying.",
                "Check, then act: both instances can read 'not spent' before either records "
                "it, and both pay, as section 2a's race shows. Checking and recording must be "
                "one atomic step (MRTR-S5d).",
            ),
            Option(
                "A shorter expiry.",
                "Principal, expiry and request binding alone do not give single use: both "
                "clicks arrive in time (MRTR-S5d).",
            ),
            _right(
                "Spending the state's token id, in one atomic step, in a ledger both instances "
                "share, before paying.",
                "Single use is enforced server-side (MRTR-S5d, SEC-7): one INSERT that the "
                "primary key refuses both checks and records, so exactly one instance wins.",
            ),
            Option(
                "Encrypting the state with AES-GCM.",
                "Encryption hides the claims (SEC-8), but the same valid ciphertext still "
                "verifies on every replay; single use is a server-side check (MRTR-S5d).",
            ),
        ),
        _q(
            "Predict the output: two connections, A and B, to one SQLite file.",
            Option(
                "`True True True`",
                "b is another connection, but to the same file: the row a inserted is there, "
                "and the primary key refuses a second (MRTR-S5d).",
            ),
            Option(
                "`True False False`",
                "'y' has never been spent, so its INSERT adds a row: rowcount 1 (MRTR-S5d).",
            ),
            _right(
                "`True False True`",
                "The first 'x' inserts a row; the second, on b, conflicts and inserts none; "
                "'y' is new. A spend that reports its own row count is single use across "
                "instances (MRTR-S5d).",
            ),
            code=SPEND_CODE,
        ),
        _q(
            "A refund server spends each approval's token id once. Alice asks for a refund of "
            "one order twice and gets two approvals. What happens?",
            _right(
                "Both pay: each approval is a new state with a new token id.",
                "Single use stops one state being used twice (MRTR-S5d), not the server "
                "issuing a second; once per order needs an idempotency key on the order (KIT).",
            ),
            Option(
                "The second is refused: the ledger sees the same order.",
                "The ledger records token ids, not orders (MRTR-S5d): the second approval's id "
                "is new.",
            ),
            Option(
                "The second is refused because its request digest is the same.",
                "The digest binds a state to its request (MRTR-S5c); both approvals were issued "
                "for that same request, so both match.",
            ),
        ),
    ),
    section="2",
)

# At the end: what a client may cache of such a call (CACHE-2/3/6). 01b teaches caching in full;
# it is asked here, on the core path, because section 2c's lost final response is where a
# learner is tempted to cache: keep the answer so a repeat need not reach the server.
CACHING = Quiz(
    "02b",
    "What a client may cache of a call",
    (
        _q(
            "Section 2c's repeated round 3 got the booking reference. May the client cache it "
            "for a later identical retry?",
            Option(
                "Yes: a repeat gets the same answer anyway.",
                "A client never caches the result of a request with `inputResponses` or "
                "`requestState` (CACHE-3), nor any `tools/call` result (CACHE-6).",
            ),
            _right(
                "No.",
                "CACHE-6 and CACHE-3: answers and state are not part of any cache key.",
            ),
            Option(
                "Yes, for the result's `ttlMs`.",
                "Tool results carry no `ttlMs`; discover, lists and `resources/read` do (CACHE-1).",
            ),
        ),
        _q(
            "Round 1 of `book_table` answered `input_required`. A second booking, same "
            "arguments: what does the client send?",
            Option(
                "Nothing yet: it shows the cached form.",
                "`input_required` is not cacheable (CACHE-2): this time the server may ask "
                "otherwise, or not at all.",
            ),
            Option(
                "Round 2, with round 1's `requestState`.",
                "A state belongs to the call it came with (MRTR-C4).",
            ),
            _right(
                "A new round 1.",
                "Nothing of an `input_required` is cached (CACHE-2); no state crosses calls "
                "(MRTR-C4).",
            ),
        ),
    ),
)

QUIZZES = (ROTATION, SINGLE_USE, CACHING)
