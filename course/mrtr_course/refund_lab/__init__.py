"""The refund lab that lessons 02, 02a and 02b share: the refund server attacked and hardened.

* ``lab`` — ``RefundLab`` (the refund server in one configuration, in this process), its users,
  its clock, its log, and the clients that talk to it (``RawCaller`` sends any state);
* ``views`` — what the lessons print: one answer and its log line, tallies, tables, source;
* ``attacks`` — the attacker's toolkit: reading, editing and sending a state (``redeem``), the
  library check that refused it (``show_check``), and the scoreboard;
* ``grading`` — what the lessons' checkpoints share: a round 2 and its logged reason, a "not
  yet" with the mistake named, the server's error log kept out of the notebook.

The attacks themselves, and the checkpoints, belong to the lessons: they sit beside their
notebooks (``notebooks/02-securing-request-state/lesson02_attacks.py``, ...). Nothing here
imports them: the arrow goes notebook -> course -> library.
"""
