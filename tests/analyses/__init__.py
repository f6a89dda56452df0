"""Tests of ead.analyses's modules, one file per module (tests/analyses/test_<module>.py)."""
