"""The off-policy cost figure (ead.plots.beyond_off_policy_cost) draws the TIS statistics of each sampler."""

import numpy as np
import pytest

from tests.conftest import CELL, steps_table


def test_off_policy_cost_figure_draws_the_tis_statistics_of_each_sampler(tmp_path):
    from ead.plots import beyond_off_policy_cost
    from ead.rl.aggregate import train_curves

    steps = steps_table().assign(behaviour_target_log_ratio=lambda t: np.where(t.sampler == "ead", 0.05, 0.0),
                                 tis_weight_mean=1.0, tis_weight_max=lambda t: np.where(t.sampler == "ead", 2.0, 1.0),
                                 tis_capped_fraction=lambda t: np.where(t.sampler == "ead", 0.01, 0.0),
                                 tis_ess_fraction=lambda t: np.where(t.sampler == "ead", 0.97, 1.0),
                                 sequence_ess_fraction=lambda t: np.where(t.sampler == "ead", 0.6, 1.0),
                                 tis_capped_sequence_fraction=lambda t: np.where(t.sampler == "ead", 0.004, 0.0))
    experiment = {"policies": [CELL["policy"]], "algorithms": [CELL["algorithm"]], "samplers": ["tau1.0", "ead"],
                  "n": [CELL["n"]], "seeds": [0, 1, 2]}
    fig = beyond_off_policy_cost.plot(None, train_curves(steps), experiment, 16)
    assert [ax.get_ylabel() for ax in fig.axes] == list(beyond_off_policy_cost.PANELS.values())
    log_ratio = fig.axes[0].get_lines()  # one line per sampler, at its (constant) value over steps
    assert [line.get_label() for line in log_ratio] == ["$\\tau$ = 1.0", "EAD"]
    assert [line.get_ydata()[0] for line in log_ratio] == pytest.approx([0.0, 0.05])
    sequence_ess = fig.axes[list(beyond_off_policy_cost.PANELS).index("sequence_ess_fraction")].get_lines()
    assert [line.get_ydata()[0] for line in sequence_ess] == pytest.approx([1.0, 0.6])
    capped = fig.axes[list(beyond_off_policy_cost.PANELS).index("tis_capped_sequence_fraction")].get_lines()
    assert [line.get_ydata()[0] for line in capped] == pytest.approx([0.0, 0.004])
