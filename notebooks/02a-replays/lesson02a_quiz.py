"""Lesson 02a's self-check questions, one quiz after its main section (the rules:
mrtr_course/quizzes.py's docstring). A "predict the output" question's right answer is computed
by running its code in tests/course/test_quiz.py, so it cannot drift from what Python prints."""

from __future__ import annotations

from mrtr_course.quizzes import Option, Quiz, _q, _right

REPLAY_RETRY = """{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
  "_meta": {...},
  "name": "request_refund",
  "arguments": {"order_id": "A-1002"},
  "inputResponses": {"confirm": {"action": "accept", "content": {"ok": true}}},
  "requestState": "hmac1.k1.…"}}
# the requestState is alice's genuine approval of order A-1001, sent by alice, in time"""

SKEW_CODE = """CLOCK_SKEW_S = 30
claims = {"iat": 1000, "exp": 1900}
for now in (1900, 1925, 1931):
    print(now, "late" if now > claims["exp"] + CLOCK_SKEW_S else "in time")"""

REPLAYS = Quiz(
    "02a",
    "Replays",
    (
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
        ),
        _q(
            "Spot the bug in this retry: the hardened server answers it with -32602 "
            "Invalid requestState. Why?",
            Option(
                "Its id, 7, is not round 1's id.",
                "A retry must use a new id (MRTR-C3): that part is right.",
            ),
            _right(
                "The arguments name order A-1002, but the state was issued for a request "
                "about A-1001.",
                "The state is bound to its request, method plus a digest of the arguments, and "
                "refused with any other (MRTR-S5c); a retry repeats the arguments (MRTR-C5).",
            ),
            Option(
                "`inputResponses` should be keyed by the question's text, not `confirm`.",
                "Answers are keyed by the server's `inputRequests` keys (MRTR-S2a, "
                "MRTR-C6): `confirm` is right.",
            ),
            code=REPLAY_RETRY,
        ),
        _q(
            "Predict the output: a state with this `exp`, checked the way exercise 1 checks "
            "it, at three moments.",
            Option(
                "`1900 in time` · `1925 late` · `1931 late`",
                "A state is late only when `now` is past `exp` by more than the skew, 30 s: "
                "1925 is within it (MRTR-S5b; the 30 s are the kit's, KIT).",
            ),
            _right(
                "`1900 in time` · `1925 in time` · `1931 late`",
                "`now > exp + 30` is false at 1900 and 1925, true at 1931: the skew tolerates "
                "small clock drift (KIT) around the expiry (MRTR-S5b).",
            ),
            Option(
                "`1900 late` · `1925 late` · `1931 late`",
                "At `now == exp` the state is not past its expiry, and the skew adds 30 s "
                "more (MRTR-S5b, KIT).",
            ),
            code=SKEW_CODE,
        ),
    ),
    section="2",
)

QUIZZES = (REPLAYS,)
