"""The CPU trainer's per-step signal diagnostics (ead.rl.train.group_outcomes)."""

import pytest

from ead.rl.train import group_outcomes


def test_group_outcomes_count_informative_and_solved_groups():
    # groups of 4: all wrong, one right, all right, two right
    rewards = [0, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1, 0, 1, 1, 0]
    groups = [g for g in range(4) for _ in range(4)]
    informative, solved = group_outcomes(rewards, groups)
    assert informative == pytest.approx(2 / 4)  # 0 < correct < 4: groups 1 and 3
    assert solved == pytest.approx(3 / 4)       # a correct rollout: groups 1, 2 and 3
    assert group_outcomes([0.0, 0.0], [0, 1]) == (0.0, 0.0)
