"""Our grader as verl's reward (ead.rl.verl.reward): acc and pred, and the grader configured from its keyword
arguments."""

from __future__ import annotations

import pytest

from ead.rewards import GraderSettings, configure_grader, get_grader


def test_verl_reward_configures_the_grader_from_its_keyword_arguments():
    from ead.rl.verl.reward import compute_score

    try:
        result = compute_score("math", "so \\boxed{1} and \\boxed{2}", "2", grader_last_boxed_only=True,
                               grader_timeout_s=2.0)
        assert result == {"score": 1.0, "acc": 1.0, "pred": "2", "status": "correct", "timeout": 0.0}
        assert get_grader().settings.last_boxed_only
        with pytest.raises(ValueError, match="unknown grader setting"):
            compute_score("math", "\\boxed{1}", "1", grader_timeout=2.0)
    finally:
        configure_grader(GraderSettings())


def test_reward_is_our_grader_with_acc_and_pred():
    from ead.rl.verl.reward import compute_score

    assert compute_score("math", "so the answer is \\boxed{0.5}", "1/2") == {
        "score": 1.0, "acc": 1.0, "pred": "1/2", "status": "correct", "timeout": 0.0}
    assert compute_score("math", "I do not know", "3")["status"] == "no_answer"
    assert compute_score("math", "I do not know", "3")["score"] == 0.0
    with pytest.raises(ValueError, match="'chess' is not a grader task"):
        compute_score("chess", "x", "y")
