"""Tests of ead.rl.verl's modules, one file per module (tests/rl/verl/test_<module>.py)."""
