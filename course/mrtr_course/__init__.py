"""The course: the code the lessons share, apart from the reference library.

Its own distribution (``course/pyproject.toml``, ``mrtr-course``), installed beside the library
in the lessons' environment. The library (``mrtr_kit``) never imports anything from here;
``pyproject.toml``'s import-linter contracts say so and ``tests/library/test_architecture.py``
runs them. Inside the course the arrows point one way, top to bottom (the layers contract
``course-layers``):

* ``__main__`` — ``python -m mrtr_course``: the library's command line plus ``serve --legacy``
  and ``demo``; ``widgets`` — ipywidgets front ends: forms, URL cards, panels, the call driver,
  quizzes;
* ``console`` — the same forms in a terminal (``python -m mrtr_course demo``); ``refund_lab`` —
  the refund lab lessons 02, 02a and 02b share: the lab, what it prints, the attacker's
  toolkit, what the checkpoints share;
  ``trips`` — the trip planner called through a fleet (lessons 00 and 03);
* ``sdk_port`` — lesson 03's trip planner ported to the official SDK;
* ``examples`` — the demo servers the lessons start, and the conformance server, registered for
  ``mrtr-kit serve --example NAME`` (the entry points in ``course/pyproject.toml``);
* ``legacy`` — the 2025-11-25 server, client and sessions lesson 03 migrates from;
* ``fleet`` — real server processes on loopback, balanced in the client or by the library's nginx;
* ``messages`` — requests written out and shown by hand (lessons 01, 01b, 05);
* ``plain`` — plain-Python helpers with no ipywidgets: the wire trace, the proxy address, what a
  URL card must show, the sampling stand-in; ``users`` — scripted users for checkpoints (03, 04).

``checkpoints`` (a checkpoint's verdict) and ``quizzes`` (the quiz engine) serve every lesson.

What one lesson owns sits beside its notebook, not here: ``notebooks/NN-name/lessonNN_*.py``
(its lab, attacks, checkpoints and quiz) and ``solutions/`` (``notebooks/README.md``).
"""
