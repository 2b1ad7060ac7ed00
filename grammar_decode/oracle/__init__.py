"""The independent reference recognizer and its token masks (slow; for tests)."""
