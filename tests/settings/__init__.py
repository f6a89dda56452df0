"""Tests of ead.settings's modules, one file per module (tests/settings/test_<module>.py)."""
