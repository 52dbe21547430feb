"""The test suite: tests/library checks the library alone, tests/course the course (and the
library through it); the modules here are the helpers both share."""
