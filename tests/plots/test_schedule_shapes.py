"""The schedule-shapes figure (ead.plots.schedule_shapes, configs/ablations/beyond_the_paper.yaml): tau and the
paired effects, drawn from the tables."""

from pathlib import Path

import pytest

from ead.analyses.sampler_schedules import sampler_schedules
from ead.plots import schedule_shapes
from ead.rl.paired import paired_curves
from ead.settings.rl import sampler_schedule
from tests.conftest import BEYOND
from tests.plots.conftest import grid_tables

ROOT = Path(__file__).resolve().parents[2]


def test_schedule_shapes_figure_draws_tau_and_the_paired_effects_from_the_tables():
    spec = BEYOND["schedule_shapes"]
    config = {**BEYOND, "rl": {**BEYOND["rl"], "experiments": {"shapes": {
        "policies": [spec["policy"]], "algorithms": [spec["algorithm"]], "n": [spec["n"]], "seeds": [0, 1],
        "samplers": [spec["baseline"], *spec["samplers"]]}}}}
    problems, _ = grid_tables(config, "shapes", lambda sampler, seed: [9, 5 + seed, 1 + len(sampler) % 3])
    paired = paired_curves(problems, [spec["baseline"]], [1, 16], resamples=100, seed=0)
    shapes = sampler_schedules({s: sampler_schedule(BEYOND, s) for s in spec["samplers"]}, spec["steps"],
                               spec["max_position"])
    fig = schedule_shapes.plot(shapes, paired, spec)
    first_step = fig.axes[0]
    assert [line.get_label() for line in first_step.get_lines() if line.get_label()[0] != "_"] == [
        "EAD + TIS", r"linear to $\tau_{min}$ at $D$ + TIS", r"two-stage, switch at $D/2$ + TIS",
        "mean-matched (negexp's mean over [0, D]) + TIS"]
    two_stage = next(line for line in first_step.get_lines() if line.get_label() == r"two-stage, switch at $D/2$ + TIS")
    # step 1: D = 30, so tau_max for t < 15 and tau_min from t = 15
    assert list(two_stage.get_ydata()[:15]) == [1.2] * 15 and two_stage.get_ydata()[15] == 0.1
    pass1 = fig.axes[2]
    linear = next(line for line in pass1.get_lines() if line.get_label() == r"linear to $\tau_{min}$ at $D$ + TIS")
    expected = paired[(paired["sampler"] == "ead_linear_tis") & (paired["metric"] == "pass@1")].sort_values("step")
    assert list(linear.get_ydata()) == pytest.approx(list(expected["effect"]))
    # each shape is told apart by colour and line style, and keeps both from the tau panels to the paired panels
    def styles(axis):
        return {line.get_label(): (line.get_color(), line.get_linestyle()) for line in axis.get_lines()
                if line.get_label()[0] != "_"}
    shapes_style = styles(first_step)
    assert len({color for color, _ in shapes_style.values()}) == 4
    assert len({style for _, style in shapes_style.values()}) == 4
    for axis in fig.axes[1:4]:
        assert styles(axis) == shapes_style, axis
