"""Tests of ead.data's modules, one file per module (tests/data/test_<module>.py)."""
