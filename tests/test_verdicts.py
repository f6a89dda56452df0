"""The one decision rule behind every verdict (premises, claims)."""

import pytest

from ead.verdicts import Verdict, combine, decide


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


@pytest.mark.parametrize("low, high, threshold, direction, smallest, expected", [
    (-0.013, 0.006, 0.0, "greater", 0.02, "negligible"),     # a powered null: no effect of a size that matters
    (-0.013, 0.006, 0.0, "greater", 0.01, "inconclusive"),   # the same CI with a finer bound cannot say so
    (-0.021, 0.006, 0.0, "greater", 0.02, "inconclusive"),   # one end outside the band
    (-0.02, 0.01, 0.0, "greater", 0.02, "inconclusive"),     # touching the band's edge is not inside it
    (0.002, 0.015, 0.0, "greater", 0.02, "negligible"),      # real but smaller than matters
    (0.01, 0.05, 0.0, "greater", 0.02, "supported"),         # an effect that may matter
    (-0.05, -0.03, 0.0, "greater", 0.02, "contradicted"),
    (-0.015, -0.002, 0.0, "greater", 0.02, "negligible"),    # on the other side, by less than matters
    (0.29, 0.33, 0.3, "greater", 0.05, "negligible"),        # the band sits around the threshold
    (-0.004, 0.004, 0.0, "less", 0.005, "negligible"),
    (-0.05, 0.05, 0.0, "greater", None, "inconclusive"),     # no declared bound: never negligible
    (-0.001, 0.001, 0.0, "greater", None, "inconclusive"),
])
def test_a_ci_inside_the_smallest_effect_that_matters_reads_negligible(low, high, threshold, direction, smallest,
                                                                        expected):
    verdict = decide(low, high, threshold=threshold, direction=direction, smallest_effect=smallest)
    assert verdict.verdict == expected
    if expected == "negligible":
        assert f"({threshold - smallest:g}, {threshold + smallest:g})" in verdict.rule


def test_the_side_of_a_negligible_ci_is_in_its_rule():
    assert "real, and smaller than matters" in decide(0.002, 0.015, smallest_effect=0.02).rule
    assert "other side" in decide(-0.015, -0.002, smallest_effect=0.02).rule
    assert "also" not in decide(-0.01, 0.01, smallest_effect=0.02).rule


def test_a_ci_of_zero_width_never_reads_negligible():
    """No spread (every paired difference equal) bounds nothing: the CI's side of the threshold decides."""
    assert decide(0.0, 0.0, smallest_effect=0.02).verdict == "inconclusive"
    assert decide(0.01, 0.01, smallest_effect=0.02).verdict == "supported"
    assert decide(-0.01, -0.01, smallest_effect=0.02).verdict == "contradicted"
    assert decide(-0.001, 0.001, smallest_effect=0.02).verdict == "negligible"


@pytest.mark.parametrize("smallest", [0, -0.02, float("nan"), float("inf"), "0.02", True])
def test_a_bad_smallest_effect_is_refused_by_name(smallest):
    with pytest.raises(ValueError, match="smallest_effect"):
        decide(-0.01, 0.01, smallest_effect=smallest)


def test_a_numpy_smallest_effect_is_a_number():
    import numpy as np

    for smallest in (np.float32(0.02), np.float64(0.02), np.int64(1)):
        assert decide(-0.01, 0.01, smallest_effect=smallest).verdict == "negligible"
    with pytest.raises(ValueError, match="smallest_effect"):
        decide(-0.01, 0.01, smallest_effect=np.bool_(True))


def test_combine_reads_a_negligible_part_as_the_whole_claim_falling_short():
    yes, no, maybe = Verdict("supported", "a"), Verdict("contradicted", "b"), Verdict("inconclusive", "c")
    small = Verdict("negligible", "d")
    assert combine([yes, small]).verdict == "negligible"
    assert combine([maybe, small]).verdict == "negligible"
    assert combine([small, no]).verdict == "contradicted"
    assert combine([small, small]).verdict == "negligible"
