"""The course's ipywidgets front ends: MRTR input requests as forms, cards and panels.

They render what the form engine (``mrtr_kit.forms``: ``requestedSchema`` -> fields -> parse ->
validate -> ``ElicitResult``) and the plain helpers (``mrtr_course.plain``) compute:

* ``answer_widget`` — what every answer widget shares;
* ``form_widgets`` — ``ElicitationForm``; ``url_card`` — ``UrlCard``; ``panels`` —
  ``SamplingPanel`` and ``RootsPanel``;
* ``flow`` — ``CallFlow``, the non-blocking driver: a button's click sends the retry, nothing
  ever waits in a cell (``widget_client``, ``start_tool_call``, ``start_prompt``,
  ``start_resource``);
* ``round_view`` — ``RoundDiffView``, the client's rounds; ``server_trace_view`` —
  ``ServerTraceView``, the server's rounds, with a refresh button; ``quiz`` — ``show_quiz``,
  the self-checks (questions in ``mrtr_course.quizzes``);
* ``elicit_callbacks`` — the kit's forms answering the official SDK's and FastMCP's clients.

Every module here imports ipywidgets; import the one you need.
"""
