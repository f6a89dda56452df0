"""Tests of ead.plots's modules, one file per module (tests/plots/test_<module>.py)."""
