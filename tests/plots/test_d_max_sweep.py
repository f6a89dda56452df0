"""The d_max sweep figure (ead.plots.d_max_sweep, configs/ablations/d_max_sweep.yaml), drawn from tables only."""

from pathlib import Path

import pytest

from ead.plots import d_max_sweep
from ead.rl.aggregate import eval_curves, train_curves
from ead.rl.paired import paired_curves
from tests.conftest import D_MAX
from tests.plots.conftest import grid_tables

ROOT = Path(__file__).resolve().parents[2]


def test_d_max_figure_draws_each_caps_d_s_and_its_paired_difference_to_the_uncapped_cell():
    def correct(sampler, seed):
        return [8, 4 + seed, 2] if sampler != "ead_tis_dmax25" else [6, 3 + seed, 2]

    problems, steps = grid_tables(D_MAX, "d_max_sweep", correct)
    paired = paired_curves(problems, ["tau1.0", "ead_tis"], [1, 16], resamples=100, seed=0)
    experiment = D_MAX["rl"]["experiments"]["d_max_sweep"]
    fig = d_max_sweep.plot(eval_curves(problems, [1, 16]), train_curves(steps), experiment, 16, paired)
    schedule_axis, pass16, pass1 = fig.axes[0], fig.axes[1], fig.axes[2]
    decay = {line.get_label(): line.get_ydata() for line in schedule_axis.get_lines()}
    assert list(decay["$d_{max}$ = 25"]) == [25] * 17  # frozen at d0
    assert decay["$d_{max}$ = 41"][-1] == 41 and decay["uncapped ($d_{max}$ = 40000)"][-1] == 25 + 5 * 16
    paired_axis = fig.axes[4]  # under Pass@16 (the blank panel under the schedule is axes[3])
    lines = {line.get_label(): line.get_ydata() for line in paired_axis.get_lines() if line.get_label()[0] != "_"}
    expected = paired[(paired["baseline"] == "ead_tis") & (paired["metric"] == "pass@16")
                      & (paired["sampler"] == "ead_tis_dmax25")].sort_values("step")["effect"]
    assert list(lines["$d_{max}$ = 25"]) == pytest.approx(list(expected))
    assert set(lines) == {"$d_{max}$ = 25", "$d_{max}$ = 41", "$d_{max}$ = 73"}  # the reference is not differenced
    assert list(lines["$d_{max}$ = 41"]) == pytest.approx([0.0, 0.0])  # same counts as the uncapped cell
    assert pass16.get_ylabel() == "Pass@16" and pass1.get_ylabel() == "Pass@1"
    # a cap has one colour in every panel (its d_s, its curves, its paired difference)
    colours = {line.get_label(): line.get_color() for line in pass16.get_lines()}
    for axis in (schedule_axis, paired_axis):
        for line in axis.get_lines():
            if line.get_label() in colours:
                assert line.get_color() == colours[line.get_label()], (axis, line.get_label())
