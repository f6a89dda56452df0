"""What is read of a response and a reference (ead.rewards.extraction): the bounded tail or its last box, and
bare references wrapped."""

from __future__ import annotations

import pytest

from ead.rewards.extraction import TAIL_CHARS, gold_text, prediction_text


def test_prediction_text_is_the_bounded_tail_or_its_last_box():
    long_response = "x" * 1_000_000 + " so \\boxed{1} and finally \\boxed{2}."
    tail = prediction_text(long_response, last_boxed_only=False)
    assert len(tail) == TAIL_CHARS and tail.endswith("\\boxed{2}.")
    assert prediction_text(long_response, last_boxed_only=True) == "\\boxed{2}"
    assert prediction_text("The answer is $9$.", last_boxed_only=True) == "The answer is $9$."  # no box: the tail
    assert prediction_text("   ", last_boxed_only=False) is None


def test_gold_text_wraps_only_bare_references():
    assert gold_text(" \\text{Evelyn} ") == "$\\text{Evelyn}$"
    assert gold_text("\\$18.90") == "$\\$18.90$"  # an escaped dollar is not a delimiter
    assert gold_text("\\boxed{1}\\boxed{2}") == "\\boxed{1}\\boxed{2}"  # every box is kept
    assert gold_text("$x$ and $y$") == "$x$ and $y$"
    with pytest.raises(ValueError, match="longer than 4096"):
        gold_text("1" * 5000)
