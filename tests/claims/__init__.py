"""Tests of ead.claims's modules, one file per module (tests/claims/test_<module>.py)."""
