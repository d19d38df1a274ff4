#!/usr/bin/python3
"""Tier 2 of test_conflicts.py: the same Conflicts checks on a fake root,
in the integration suite (no real kernel, no lock)."""

import lmtest
from test_conflicts import ConflictsFakeRootTest  # noqa: F401 (run by lmtest.main)

if __name__ == "__main__":
    lmtest.main()
