"""The course's tests: the lessons, their checkpoints and the course package, with the library."""
