"""Lesson 01's self-check questions (see the package's docstring for the rules)."""

from __future__ import annotations

from . import Option, Quiz, _q, _right

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

QUIZZES = (LESSON_01,)
