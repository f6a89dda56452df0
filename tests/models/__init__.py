"""Tests of ead.models's modules, one file per module (tests/models/test_<module>.py)."""
