"""Tests of ead.samplers's modules, one file per module (tests/samplers/test_<module>.py)."""
