"""Self-check quizzes: a few multiple-choice questions at the end of each lesson.

Plain data and logic, no widgets (``mrtr_kit.course.widgets.quiz`` renders them). Every option
carries its explanation, and every explanation cites the rule it rests on: a spec rule ID from
the MRTR digest, or "(KIT)" for the kit's own conventions. ``Question`` refuses to exist unless
exactly one option is right and every option explains itself, so a quiz cannot ship half-written.

``quiz("01")`` is lesson 01's quiz; ``Quiz.text()`` is its plain-text form (the questions, then
the answers), which is what a stored notebook shows where widgets do not render (GitHub).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

LETTERS = "abcdefgh"
# A rule ID as the digest writes them (MRTR-C2, MRTR-S5a, CACHE-3, ...), or the kit's "(KIT)".
_CITATION = re.compile(
    r"\b(?:CACHE|CAP|CORE|DISC|ELIC|ERR|HTTP|MIG|MRTR|ROOTS|RT|SAMP|SCH|SEC|VER|STDIO)"
    r"-[A-Z]?\d+[a-z]?\b|\(KIT\)"
)


@dataclass(frozen=True)
class Option:
    """One answer to choose. ``why`` says why it is right or wrong, citing its rule."""

    text: str
    why: str
    right: bool = False


@dataclass(frozen=True)
class Feedback:
    """What a learner sees after choosing an option."""

    right: bool
    letter: str
    why: str

    @property
    def message(self) -> str:
        verdict = "✔ Right." if self.right else "✘ Not quite."
        return f"{verdict} ({self.letter}) {self.why}"


@dataclass(frozen=True)
class Question:
    ask: str
    options: tuple[Option, ...]

    def __post_init__(self) -> None:
        if len(self.options) < 2 or len(self.options) > len(LETTERS):
            raise ValueError(f"{self.ask!r}: a question needs 2 to {len(LETTERS)} options")
        if sum(o.right for o in self.options) != 1:
            raise ValueError(f"{self.ask!r}: exactly one option must be right")
        for option in self.options:
            if not option.why.strip():
                raise ValueError(f"{self.ask!r}: option {option.text!r} explains nothing")
            if not _CITATION.search(option.why):
                raise ValueError(f"{self.ask!r}: option {option.text!r} cites no rule")

    @property
    def answer(self) -> int:
        """The index of the right option."""
        return next(i for i, o in enumerate(self.options) if o.right)

    def check(self, choice: int) -> Feedback:
        option = self.options[choice]  # IndexError for a choice that is not there
        return Feedback(option.right, LETTERS[choice], option.why)


@dataclass(frozen=True)
class Quiz:
    lesson: str  # "00", "01", ...
    title: str
    questions: tuple[Question, ...]

    def text(self, *, answers: bool = True) -> str:
        """The quiz as plain text: numbered questions, lettered options, then the answers."""
        lines = [f"Self-check · {self.title}", ""]
        for n, q in enumerate(self.questions, 1):
            lines.append(f"{n}. {q.ask}")
            lines.extend(f"   {LETTERS[i]}) {o.text}" for i, o in enumerate(q.options))
            lines.append("")
        if answers:
            lines.append("Answers:")
            for n, q in enumerate(self.questions, 1):
                right = q.options[q.answer]
                lines.append(f"{n}. {LETTERS[q.answer]}) {right.why}")
        return "\n".join(lines).rstrip()


def _q(ask: str, *options: Option) -> Question:
    return Question(ask, options)


def _right(text: str, why: str) -> Option:
    return Option(text, why, right=True)


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


LESSON_01 = Quiz(
    "01",
    "The basic flow",
    (
        _q(
            "Round 1 came back `input_required` with a `requestState`. What does the client "
            "do with that string?",
            Option(
                "Decode it, to show the user how far the call has got.",
                "The client must not inspect, decode, alter or depend on requestState (MRTR-C2).",
            ),
            _right(
                "Send exactly that string back on the retry of this call, untouched.",
                "If requestState is present, the retry carries exactly that string (MRTR-C2), "
                "and only the retry of that same request may use it (MRTR-C4).",
            ),
            Option(
                "Keep it, and send it with every later call to the same tool.",
                "A round's requestState belongs to the retry of that request only, never to "
                "other or parallel calls (MRTR-C4).",
            ),
            Option(
                "If a later result has no `requestState`, send the previous one again.",
                "When a result carries no requestState, the retry must not send one (MRTR-C2).",
            ),
        ),
        _q(
            "The server asked for two inputs, `login` and `units`. The user has filled in "
            "only `login`. What should the client do?",
            Option(
                "Send the retry with `login` alone; the server will ask for `units` later.",
                "The client must produce every requested input before retrying (MRTR-C1), "
                "and send an answer for every key of the latest inputRequests (MRTR-C6).",
            ),
            Option(
                "Send the server a JSON-RPC error for the missing key.",
                "Clients send no JSON-RPC responses, errors included (CORE-6); a user who "
                "will not answer a form declines or cancels it, which is an answer too "
                "(MRTR-C8).",
            ),
            _right(
                "Wait until it has an answer for both keys, then send one retry with both.",
                "Every requested input comes before the retry (MRTR-C1), one answer per key "
                "of the latest inputRequests (MRTR-C6).",
            ),
        ),
        _q(
            "The user presses Decline on a form. What goes to the server?",
            _right(
                'A retry whose `inputResponses` holds `{"action": "decline"}` under that key.',
                "Declining is not failing: for elicitation the client still retries, with "
                "the action and no content (MRTR-C8, ELIC-6, ELIC-7).",
            ),
            Option(
                "Nothing: the user said no, so the client drops the call.",
                "For elicitation the client still retries with decline or cancel; the server "
                "decides what a decline means (MRTR-C8).",
            ),
            Option(
                'A retry with `{"action": "accept"}` and empty content.',
                "accept means the user submitted the form; decline is the explicit no (ELIC-6).",
            ),
        ),
        _q(
            "A server answers every retry of a call with `input_required` again, round "
            "after round. What does the kit's client do?",
            _right(
                "It stops that call after 10 rounds and raises `TooManyRounds`.",
                "The kit caps the rounds of each call, 10 by default, so a faulty or hostile "
                "server cannot loop forever: a convention of the kit, not a rule of the spec "
                "(MRTR-C7 (KIT)).",
            ),
            Option(
                "It keeps answering: only the server may end a call.",
                "A server could then keep a client busy forever: the kit's client caps the "
                "rounds per call (MRTR-C7 (KIT)).",
            ),
            Option(
                "It sends the server a JSON-RPC error saying it has had enough.",
                "Clients send no JSON-RPC responses, errors included (CORE-6); the client "
                "stops the call on its own side (MRTR-C7 (KIT)).",
            ),
        ),
    ),
)


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


QUIZZES: dict[str, Quiz] = {q.lesson: q for q in (LESSON_00, LESSON_01, LESSON_02, LESSON_03)}


def quiz(lesson: str) -> Quiz:
    """The quiz of lesson ``"00"``, ``"01"``, ``"02"`` or ``"03"``."""
    try:
        return QUIZZES[lesson]
    except KeyError:
        raise KeyError(f"no quiz for lesson {lesson!r}; there are {sorted(QUIZZES)}") from None
