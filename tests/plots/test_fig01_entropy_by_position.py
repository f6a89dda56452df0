"""Fig. 1 (ead.plots.fig01_entropy_by_position): the role panel's ticks and legend stay legible, and Figs. 1-2
draw the tiny policies' tables."""

import itertools

import numpy as np
import pandas as pd

from ead.analyses import forking
from ead.analyses.entropy_by_position import write_role_summary
from tests.conftest import LOG, fork_samples, role_samples


def visible_tick_labels(ax, axis="x"):
    low, high = sorted(getattr(ax, f"get_{axis}lim")())
    ticks = getattr(ax, f"get_{axis}ticks")()
    labels = getattr(ax, f"get_{axis}ticklabels")()
    return [label for tick, label in zip(ticks, labels) if low - 1e-12 <= tick <= high + 1e-12 and label.get_text()]


def overlaps(labels) -> list:
    boxes = [(label.get_text(), label.get_window_extent()) for label in labels]
    return [(a, b) for (a, box_a), (b, box_b) in itertools.combinations(boxes, 2) if box_a.overlaps(box_b)]


def test_fig01_role_panel_ticks_do_not_run_together_and_its_legend_stays_off_the_points():
    """Roles of nearly equal entropy (3.5875 .. 3.59 nats) used to give labels '3.58753.5900...' and a legend that sat
    mid-panel."""
    from ead.plots import fig01_entropy_by_position

    entropy = pd.DataFrame({"position": range(1, 9), "mean_entropy": 1.0, "ci_low": 0.9, "ci_high": 1.1,
                            "fraction_alive": 1.0, "num_questions_requested": 4, "samples_per_question": 2,
                            "model_name": "tiny1m", "task": "countdown"})
    roles = pd.DataFrame({"role": ["operand", "operator", "result", "answer"],
                          "mean_entropy": [3.5876, 3.5884, 3.5891, 3.5899], "model_name": "tiny1m",
                          "task": "countdown"})
    roles = roles.assign(ci_low=roles["mean_entropy"] - 0.0004, ci_high=roles["mean_entropy"] + 0.0004)
    fig = fig01_entropy_by_position.plot(entropy, roles)
    fig.canvas.draw()
    role_axis = fig.axes[-1]
    labels = visible_tick_labels(role_axis)
    assert 2 <= len(labels) <= 5, [label.get_text() for label in labels]
    assert not overlaps(labels), overlaps(labels)
    assert not role_axis.xaxis.get_offset_text().get_text()  # values written in full, no "+3.58" offset
    legend = role_axis.get_legend().get_window_extent()
    points = role_axis.transData.transform(np.column_stack([roles["mean_entropy"], np.arange(len(roles))]))
    assert not any(legend.contains(x, y) for x, y in points)


def test_figures_draw_the_tiny_policies_tables(tmp_path):
    from ead.analyses.entropy_by_position import write_summary as write_entropy_summary
    from ead.plots.fig01_entropy_by_position import main as fig01_main
    from ead.plots.fig02_forking import main as fig02_main

    settings = {"num_questions_requested": 2, "samples_per_question": 2}
    write_entropy_summary(role_samples().assign(**settings), tmp_path / "entropy.csv", resamples=100, seed=0, log=LOG)
    write_role_summary(role_samples(), tmp_path / "roles.csv", resamples=100, seed=0, log=LOG)
    forking.write_summary(fork_samples().assign(num_questions_used=3, prefix_selection="random"), tmp_path / "f.csv",
                          k=[1, 4], resamples=100, seed=0, log=LOG)
    fig01_main(["--tables", str(tmp_path / "entropy.csv"), "--role-tables", str(tmp_path / "roles.csv"),
                "--png", str(tmp_path / "1.png"), "--pdf", str(tmp_path / "1.pdf")])
    fig02_main(["--tables", str(tmp_path / "f.csv"), "--png", str(tmp_path / "2.png"),
                "--pdf", str(tmp_path / "2.pdf")])
    for name in ("1.png", "1.pdf", "2.png", "2.pdf"):
        assert (tmp_path / name).stat().st_size > 1000, name
