"""Test and benchmark tooling (fetchers of test data, the JSON-Schema-Test-Suite harness): not part
of the installed library. Run from the repository root (``python tools/<name>.py``) or imported
by the tests and benchmarks (the repository root is on their path)."""
