"""Tests of ead.operations's modules, one file per module (tests/operations/test_<module>.py)."""
