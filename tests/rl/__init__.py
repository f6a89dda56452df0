"""Tests of ead.rl's modules, one file per module (tests/rl/test_<module>.py)."""
