"""The one decision rule behind every verdict (premises, claims)."""

import pytest

from ead.claims import Verdict, combine, decide


@pytest.mark.parametrize("low, high, threshold, direction, expected", [
    (0.01, 0.05, 0.0, "greater", "supported"),
    (-0.05, -0.01, 0.0, "greater", "contradicted"),
    (-0.01, 0.05, 0.0, "greater", "inconclusive"),
    (0.0, 0.05, 0.0, "greater", "inconclusive"),     # touching the threshold is not excluding it
    (0.35, 0.5, 0.3, "greater", "supported"),        # a share above a declared minimum
    (0.1, 0.25, 0.3, "greater", "contradicted"),
    (-0.05, -0.01, 0.0, "less", "supported"),
    (0.01, 0.05, 0.0, "less", "contradicted"),
])
def test_decide_compares_the_whole_ci_with_the_threshold(low, high, threshold, direction, expected):
    verdict = decide(low, high, threshold=threshold, direction=direction)
    assert verdict.verdict == expected and f"{threshold:g}" in verdict.rule


def test_bad_inputs_are_errors():
    with pytest.raises(ValueError, match="direction"):
        decide(0, 1, direction="up")
    with pytest.raises(ValueError, match="finite CI"):
        decide(float("nan"), 1)
    with pytest.raises(ValueError, match="low <= high"):
        decide(1, 0)


def test_combine_needs_every_part():
    yes, no, maybe = Verdict("supported", "a"), Verdict("contradicted", "b"), Verdict("inconclusive", "c")
    assert combine([yes, yes]).verdict == "supported"
    assert combine([yes, maybe]).verdict == "inconclusive"
    assert combine([maybe, no, yes]).verdict == "contradicted"
    assert combine([yes, no]).rule == "a; b"
