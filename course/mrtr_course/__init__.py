"""The course: everything a learner reads and runs, apart from the reference library.

The library (``mrtr_kit.protocol``, ``server``, ``client`` and the form engine ``forms``) never
imports anything from here; ``pyproject.toml``'s import-linter contracts say so and
``tests/library/test_architecture.py`` runs them. Inside the course the arrows point one way,
top to bottom (the layers contract ``course-layers``):

* ``widgets`` — ipywidgets front ends: forms, URL cards, panels, the call driver, quizzes;
  ``console`` — the same forms in a terminal (``python -m mrtr_kit demo``);
* ``lessons`` — each lesson's lab, checkpoints (graders) and quiz questions;
* ``sdk_port`` — lesson 03's trip planner ported to the official SDK;
* ``examples`` — the demo servers the lessons start, and the conformance server;
* ``legacy`` — the 2025-11-25 server, client and sessions lesson 03 migrates from;
* ``fleet`` — real processes behind real nginx: a fleet on loopback;
* ``plain`` — plain-Python helpers with no ipywidgets: the wire trace, the proxy address, what a
  URL card must show, the sampling stand-in.

The code a lesson teaches sits beside its notebook, in ``notebooks/`` (``lesson02_attacks.py``).
"""
