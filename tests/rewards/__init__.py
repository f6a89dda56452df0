"""Tests of ead.rewards's modules, one file per module (tests/rewards/test_<module>.py)."""
