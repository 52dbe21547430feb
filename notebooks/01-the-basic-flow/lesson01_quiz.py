"""Lesson 01's self-check questions (the rules: mrtr_course/quizzes.py's docstring).

The "predict the output" question's code runs in tests/course/test_quiz.py, which checks that
the right option is what it prints, so the two cannot drift apart."""

from __future__ import annotations

from mrtr_course.quizzes import Option, Quiz, _q, _right

# A retry with one bug: the id of round 1 used again (MRTR-C3).
REUSED_ID_RETRY = """\
# round 1 (id 1) came back input_required: asks "login", requestState "s1"
retry = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
         "params": {"_meta": meta(FORMS), "name": "get_weather",
                    "arguments": {"city": "Paris"},
                    "inputResponses": {"login": ada_accepts},
                    "requestState": "s1"}}"""

# Run by tests/course/test_quiz.py with the lesson server's widget client as ``client``.
DECLINE_CONFIRMATION = """\
table = await start_tool_call(client, "book_table", {"restaurant": "Luigi's"})
table.form.fill(party=4, when="2026-09-01").accept()
await table.settled()
table.form.decline()  # round 2 asked to confirm: the user says no
print(await table.settled(), table.rounds)"""

# After section 2: the retry on the wire, and which requests may be answered input_required
# (MRTR-R1/R2: 01b shows prompts and resources that ask; the question is here, on the core path).
LESSON_01_2 = Quiz(
    "01",
    "The retry on the wire",
    (
        _q(
            "Spot the bug in this retry.",
            _right(
                "It uses id 1 again: a retry is a new request and needs a new id.",
                "A retry is a separate request, with an id of its own (MRTR-C3).",
            ),
            Option(
                "It sends `requestState` back: the server already knows it.",
                "A requestState that came with the result goes back exactly as received (MRTR-C2).",
            ),
            Option(
                "It repeats the arguments: the server remembers them from round 1.",
                "A retry repeats the method, name and arguments (MRTR-C5).",
            ),
            code=REUSED_ID_RETRY,
        ),
        _q(
            "Round 1 came back `input_required` with a `requestState`. What does the client "
            "do with that string?",
            Option(
                "Decode it, to show the user how far the call has got.",
                "The client must not inspect, decode, alter or depend on requestState (MRTR-C2).",
            ),
            Option(
                "Keep it, and send it with every later call to the same tool.",
                "A round's requestState belongs to the retry of that request only, never to "
                "other or parallel calls (MRTR-C4).",
            ),
            _right(
                "Send exactly that string back on the retry of this call, untouched.",
                "The retry carries exactly that string (MRTR-C2), and only the retry of that "
                "request may use it (MRTR-C4).",
            ),
        ),
        _q(
            "Which requests may a server answer with `input_required`?",
            Option(
                "Any request: a server that needs input may ask whenever it likes.",
                "Only three may (MRTR-R1); every other request never gets an `input_required` "
                "answer (MRTR-R2).",
            ),
            Option(
                "Only `tools/call`: a prompt or a resource just returns its content.",
                "`prompts/get` and `resources/read` may ask too (MRTR-R1); lesson 01b shows both.",
            ),
            _right(
                "`tools/call`, `prompts/get` and `resources/read`, and nothing else.",
                "MRTR-R1 names those three; no other request gets it (MRTR-R2).",
            ),
        ),
    ),
    section="2",
)

# At the end, after sections 3 to 5: forms, refusals, several rounds, the client's obligations.
LESSON_01 = Quiz(
    "01",
    "Refusals, rounds and the client's obligations",
    (
        _q(
            "Predict the output: `book_table` asks for details, then asks to confirm; the user "
            "declines the confirmation.",
            Option(
                "`stopped 2`: a decline ends the call in the client; nothing more is sent.",
                'Declining is not failing: the client still retries with {"action": '
                '"decline"} (MRTR-C8).',
            ),
            _right(
                "`complete 3`: the decline goes out as round 3, and the tool finishes.",
                "The client retries with the decline (MRTR-C8); this tool copes (ELIC-8) and "
                "completes: nothing booked.",
            ),
            Option(
                "`input_required 3`: the server must ask again until it gets a yes.",
                "Asking again is allowed, never a duty (MRTR-S8); a decline is an explicit no "
                "to respect (ELIC-6).",
            ),
            code=DECLINE_CONFIRMATION,
        ),
        _q(
            "What does the spec say a tool should make of a decline, and of a cancel?",
            Option(
                "The same: both mean the user has not answered yet, so ask again.",
                "They differ: decline is an explicit no, cancel a dismissal (ELIC-6).",
            ),
            _right(
                "Decline is an explicit no: respect it, e.g. offer an alternative. Cancel "
                "means dismissed: nothing was chosen, the user may be asked again later.",
                "ELIC-6: the weather tool offers the public forecast on decline, and on "
                "cancel says you can ask again later.",
            ),
            Option(
                "Cancel is an error: the tool answers with a JSON-RPC error.",
                "A refusal is an answer, not an error (MRTR-C8); the tool finishes with a result.",
            ),
        ),
        _q(
            "Round 2 of a call asks for two inputs at once: two keys in `inputRequests`, "
            "`details` and `confirm`. The user has answered only `details`. What should the "
            "client do?",
            Option(
                "Send the retry with `details` alone; the server will ask for `confirm` later.",
                "Every requested input comes before the retry (MRTR-C1, MRTR-C6).",
            ),
            Option(
                "Send the server a JSON-RPC error for the missing key.",
                "Clients send no JSON-RPC responses (CORE-6); a user who will not answer "
                "declines or cancels, an answer too (MRTR-C8).",
            ),
            _right(
                "Wait until it has an answer for both keys, then send one retry with both.",
                "Every requested input comes before the retry (MRTR-C1), one answer per key "
                "of the latest inputRequests (MRTR-C6).",
            ),
        ),
        _q(
            "A retry carries an answer under a key the server did not ask for. What does "
            "the spec say, and what does the kit's client do?",
            _right(
                "The server should ignore it; the kit's client refuses to send it, its own choice.",
                "Servers ignore extras (MRTR-E3); refusing them in the client catches answers "
                "meant for another call (KIT).",
            ),
            Option(
                "The spec forbids it: a client must answer exactly the requested keys.",
                "It requires every requested key (MRTR-C1) and says servers ignore extras "
                "(MRTR-E3); refusing them is the kit's choice (KIT).",
            ),
            Option(
                "The server must answer with error -32602.",
                "Extra or unrecognised answers are ignored, not an error (MRTR-E3).",
            ),
        ),
    ),
)

QUIZZES = (LESSON_01_2, LESSON_01)
