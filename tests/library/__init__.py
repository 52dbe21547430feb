"""The library's tests: they import mrtr_kit and test-only helpers (tests.*), never the course
(the import contract tests-library-apart in pyproject.toml)."""
