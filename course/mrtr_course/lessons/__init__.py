"""Helpers the lesson notebooks call: labs to run, and checkpoints that grade the exercises.

Every notebook cell calls code from here or from the rest of ``mrtr_kit``, and the tests call
the same functions, so what a learner runs is what the test suite checks.
"""
