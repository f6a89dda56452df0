"""The RL figures (ead.plots.rl_figure) stay legible on small runs: coinciding curves stay visible, whole-number
steps, no axis beyond what a quantity can take, titles that promise a CI band only where one is drawn, and the
paired panels drawn from the paired table."""

import numpy as np
import pandas as pd
import pytest

from ead.plots.rl_figure import OWN_PLOTS, figure_plot, plot_figure, reads_paired_curves
from ead.rl.aggregate import eval_curves, train_curves
from ead.rl.paired import paired_curves
from ead.workflow import FIGURES, rl_figures
from tests.conftest import problems_table, steps_table
from tests.plots.conftest import styles_of

EXPERIMENT = {"policies": ["p"], "algorithms": ["dapo"], "samplers": ["tau1.0", "ead"], "n": [8]}


#: the same counts for both samplers: their curves coincide exactly (tau 1.0 hid under EAD in a small run's RL curves)
EQUAL = {(sampler, seed): [8, 3, 0] for sampler in ("ead", "tau1.0") for seed in (0, 1)}


@pytest.mark.parametrize("figure", ["fig04_pass_worst_at_16", "fig07_rollout_scaling"])
def test_coinciding_rl_curves_stay_visible_and_steps_are_whole_numbers(figure):
    problems = problems_table(EQUAL, step=2)
    curves = eval_curves(problems, [4], seed=0)
    fig = plot_figure(figure, curves, None, EXPERIMENT, 4,
                      paired_curves(problems, ["tau1.0"], [4], resamples=50, seed=0))
    fig.canvas.draw()
    first = fig.axes[0]
    lines = {line.get_label(): line for line in first.get_lines()}
    assert list(lines["EAD"].get_ydata()) == list(lines[r"$\tau$ = 1.0"].get_ydata())  # they coincide ...
    styles = styles_of(first)
    assert len(set(styles.values())) == len(styles) == 2, styles  # ... and differ in line style and marker
    for ax in fig.axes:
        ticks = ax.get_xticks()
        assert np.allclose(ticks, np.round(ticks)), (ax.get_title(), ticks)  # no 0.5 or 1.25 steps


def test_fig06_title_promises_a_ci_band_only_when_one_is_drawn():
    """With one seed a training metric has no spread: the band has no width, and the title used to promise one."""
    steps = steps_table().assign(policy="p")
    one_seed = train_curves(steps[steps["seed"] == 0])
    assert (one_seed["ci_low"] == one_seed["ci_high"]).all()
    title = plot_figure("fig06_entropy_dynamics", None, one_seed, EXPERIMENT, 4)._suptitle.get_text()
    assert "CI" not in title.replace("no CI band", "") and "one seed: no CI band" in title
    three_seeds = train_curves(steps)
    title = plot_figure("fig06_entropy_dynamics", None, three_seeds, EXPERIMENT, 4)._suptitle.get_text()
    assert "(mean of seeds, 95% CI)" in title


#: every sampler solves no problem at any step (one seed): every Pass@k, Worst@k and paired difference is 0, no band
NONE_SOLVED = {(sampler, 0): [0, 0, 0] for sampler in ("ead", "tau1.0")}


def all_zero_figure(figure):
    """``figure`` drawn from tables whose every value is 0 (one seed): no problem solved, no clipping, no gradient."""
    problems = problems_table(NONE_SOLVED, step=2)
    steps = steps_table()
    curves = eval_curves(problems, [4], seed=0)
    return plot_figure(figure, curves, train_curves(steps[steps["seed"] == 0]), EXPERIMENT, 4,
                       paired_curves(problems, ["tau1.0"], [4], resamples=50, seed=0))


@pytest.mark.parametrize(("figure", "bounded"), [
    ("fig04_pass_worst_at_16", {"Pass@4": 1.0, "Worst@4": 1.0}),
    ("fig11_off_policy", {"clip fraction": 1.0, "gradient norm": None, "Pass@4": 1.0}),
])
def test_quantities_that_cannot_be_negative_get_no_axis_below_zero(figure, bounded):
    """All-zero rates and norms used to sit mid-panel on an axis from -0.055 to 0.055."""
    fig = all_zero_figure(figure)
    labelled = {ax.get_ylabel(): ax for ax in fig.axes if ax.get_ylabel()}
    assert set(bounded) <= set(labelled), list(labelled)
    for label, ceiling in bounded.items():
        low, high = labelled[label].get_ylim()
        assert 0 <= low < high, (label, low, high)
        assert ceiling is None or high <= ceiling, (label, high)
    for line in labelled["Pass@4"].get_lines():
        assert not line.get_clip_on()  # a curve on the floor is drawn whole



def test_fig08s_all_zero_bars_stand_on_an_axis_from_zero():
    """Fig. 8's bars of a grid that solved nothing used to sit on an axis from -0.04 to 0.04."""
    problems, steps = problems_table(NONE_SOLVED, step=2), steps_table()
    fig = plot_figure("fig08_rollout_n_comparison", eval_curves(problems, [1, 4], seed=0),
                      train_curves(steps[steps["seed"] == 0]), EXPERIMENT, 4,
                      paired_curves(problems, ["tau1.0"], [1, 4], resamples=50, seed=0))
    assert len(fig.axes) == 2
    for ax in fig.axes:
        low, high = ax.get_ylim()
        assert 0 == low < high <= 1, (ax.get_ylabel(), low, high)

def test_a_rate_of_one_gets_no_axis_above_one():
    problems = problems_table({(sampler, 0): [8, 8, 8] for sampler in ("ead", "tau1.0")}, step=2)
    fig = plot_figure("fig04_pass_worst_at_16", eval_curves(problems, [4], seed=0), None, EXPERIMENT, 4,
                      paired_curves(problems, ["tau1.0"], [4], resamples=50, seed=0))
    low, high = fig.axes[0].get_ylim()  # Pass@4 is 0 at step 0 and 1 at step 2
    assert (low, high) == (0, 1)


def test_fig04_paired_label_and_title_agree_on_the_ci_band():
    """One seed and nothing solved: no band anywhere, so neither the title nor the paired axis may promise a CI; with
    a band under the curves (the paired differences), the title may not say there is none."""
    fig = all_zero_figure("fig04_pass_worst_at_16")
    title, paired_label = fig._suptitle.get_text(), fig.axes[-1].get_ylabel()
    assert "no CI band" in title
    assert "95% CI" not in paired_label and "no CI band" in paired_label, paired_label

    problems = problems_table({("ead", 0): [8, 4, 0], ("tau1.0", 0): [2, 1, 0]})
    paired = paired_curves(problems, ["tau1.0"], [4], resamples=50, seed=0)
    assert (paired["ci_high"] > paired["ci_low"]).any()
    curves = eval_curves(problems, [4], seed=0)
    no_band_on_the_curves = curves.assign(ci_low=curves["value"], ci_high=curves["value"])
    for table in (curves, no_band_on_the_curves):
        fig = plot_figure("fig04_pass_worst_at_16", table, None, EXPERIMENT, 4, paired)
        title, paired_label = fig._suptitle.get_text(), fig.axes[-1].get_ylabel()
        assert "no CI band" not in title and "95% CI" in title, title
        assert "(paired, 95% CI)" in paired_label, paired_label


def test_fig04_names_the_k_it_draws_whatever_its_file_name():
    """The file is fig04_pass_worst_at_16 in every profile; the smoke profile evaluates k = 4."""
    fig = all_zero_figure("fig04_pass_worst_at_16")
    title = fig._suptitle.get_text()
    labels = [ax.get_ylabel() for ax in fig.axes if ax.get_ylabel()]
    assert "k = 4" in title and "16" not in title, title
    assert labels[:2] == ["Pass@4", "Worst@4"] and labels[2].startswith("Pass@4 "), labels
    problems = problems_table(NONE_SOLVED, step=2)
    with pytest.raises(ValueError, match=r"Pass@k for k in \[4\], not k = 16"):
        plot_figure("fig04_pass_worst_at_16", eval_curves(problems, [4], seed=0), None, EXPERIMENT, 16,
                    paired_curves(problems, ["tau1.0"], [4], resamples=50, seed=0))


def test_entropy_axes_span_at_least_half_a_nat_when_the_data_vary_by_hundredths():
    """Fig. 1's role panel (3.586 .. 3.604 nats) and Fig. 6's curves filled their panels with 0.02 nats of noise."""
    from ead.plots import fig01_entropy_by_position

    half_a_nat = 0.5
    entropy = pd.DataFrame({"position": range(1, 9), "mean_entropy": 3.59 + 0.0025 * np.arange(8), "ci_low": 3.585,
                            "ci_high": 3.61, "fraction_alive": 1.0, "num_questions_requested": 4,
                            "samples_per_question": 2, "model_name": "tiny1m", "task": "countdown"})
    roles = pd.DataFrame({"role": ["operand", "operator", "result", "answer"],
                          "mean_entropy": [3.586, 3.592, 3.598, 3.604], "model_name": "tiny1m", "task": "countdown"})
    roles = roles.assign(ci_low=roles["mean_entropy"] - 0.001, ci_high=roles["mean_entropy"] + 0.001)
    fig = fig01_entropy_by_position.plot(entropy, roles)
    by_position, role_axis = fig.axes[0], fig.axes[-1]
    for low, high in (by_position.get_ylim(), role_axis.get_xlim()):
        assert 0 <= low and high - low >= half_a_nat, (low, high)

    steps = steps_table().assign(policy="p")
    steps = steps.assign(entropy=3.59 + 0.0025 * steps["step"] + 0.001 * steps["seed"])  # 0.02 nats in all
    fig = plot_figure("fig06_entropy_dynamics", None, train_curves(steps), EXPERIMENT, 4)
    low, high = fig.axes[0].get_ylim()
    assert 0 <= low and high - low >= half_a_nat, (low, high)
    assert low <= steps["entropy"].min() and steps["entropy"].max() <= high  # every value still in the frame


def test_fig04_and_fig07_draw_the_paired_panel_from_the_table():
    from ead.plots.rl_curves import facet_curves
    from ead.plots.rl_figure import plot_figure
    from ead.rl.aggregate import eval_curves

    problems = problems_table()
    paired = paired_curves(problems, ["tau1.0"], [4], resamples=100, seed=0)
    curves = eval_curves(problems, [4], seed=0)
    experiment = {"policies": ["p"], "algorithms": ["dapo"], "samplers": ["tau1.0", "ead"], "n": [8]}
    fig = plot_figure("fig04_pass_worst_at_16", curves, None, experiment, 4, paired)
    assert len(fig.axes) == 3  # Pass@4, Worst@4, paired Pass@4 difference
    paired_axis = fig.axes[2]
    lines = [line for line in paired_axis.get_lines() if line.get_label() == "EAD"]
    expected = paired[paired["metric"] == "pass@4"].sort_values("step")
    assert list(lines[0].get_ydata()) == pytest.approx(list(expected["effect"]))
    assert "paired" in paired_axis.get_ylabel()
    fig = plot_figure("fig07_rollout_scaling", curves, None, experiment, 4, paired)
    assert len(fig.axes) == 2
    with pytest.raises(ValueError, match="is 'tau0.6' in paired_baselines"):
        facet_curves(curves, experiment, ["pass@4"], "policy", ["p"], "t", paired=paired, paired_metrics=["pass@4"],
                     baseline="tau0.6")


def test_every_rl_figure_is_drawn_by_its_panels_or_a_named_plot_function():
    """The registry's RL figures without panels are exactly OWN_PLOTS' names (no module looked up by its name), and
    one with neither is refused naming both places."""
    without_panels = {name for name in rl_figures() if FIGURES[name].panels is None}
    assert set(OWN_PLOTS) == without_panels
    assert reads_paired_curves("d_max_sweep") and not reads_paired_curves("fig08_rollout_n_comparison")
    with pytest.MonkeyPatch.context() as patch:
        patch.delitem(OWN_PLOTS, "fig11_off_policy")
        with pytest.raises(ValueError, match="fig11_off_policy.*OWN_PLOTS"):
            figure_plot("fig11_off_policy")


def test_a_figure_whose_cells_are_not_in_the_curves_names_the_files_it_read(tmp_path):
    """The experiment names a policy the aggregates do not hold: one line naming the figure and its files."""
    import json

    from ead.plots.rl_figure import main
    from ead.tables import EVAL_CURVES, PAIRED_CURVES, TRAIN_CURVES

    paths = {}
    for name, table in (("eval", eval_curves(problems_table(), [1, 4], seed=0)),
                        ("train", train_curves(steps_table(), seed=0))):
        paths[name] = tmp_path / f"{name}_curves.csv"
        (EVAL_CURVES if name == "eval" else TRAIN_CURVES).write(table, paths[name])
    paths["paired"] = tmp_path / "paired_curves.csv"
    PAIRED_CURVES.write(paired_curves(problems_table(), ["tau1.0"], [1, 4], resamples=20, seed=0), paths["paired"])
    elsewhere = {**EXPERIMENT, "policies": ["not_aggregated"]}
    with pytest.raises(SystemExit, match=rf"fig04_pass_worst_at_16 from {paths['eval']}, {paths['train']}, "
                                         rf"{paths['paired']}: no rows for metric 'pass@4'"):
        main(["--figure", "fig04_pass_worst_at_16", "--eval-curves", str(paths["eval"]), "--train-curves",
              str(paths["train"]), "--paired-curves", str(paths["paired"]), "--experiment", json.dumps(elsewhere),
              "--k", "4", "--png", str(tmp_path / "f.png"), "--pdf", str(tmp_path / "f.pdf")])


def test_a_curves_table_that_lacks_one_of_the_experiments_cells_is_refused_not_drawn_smaller():
    """The experiment is a grid and every cell is evaluated: an eval_curves table that holds EAD's rows but not tau
    1.0's (rows deleted, the extent column edited to match) is refused naming the missing cell, not drawn without it."""
    from ead.plots.rl_curves import select

    curves = eval_curves(problems_table(), [1, 4], seed=0)
    assert len(select(curves, EXPERIMENT, "pass@4")) > 0
    partial = curves[curves["sampler"] != "tau1.0"]
    with pytest.raises(ValueError, match=r"1 of the experiment's cells \(policy/algorithm/sampler/n: p/dapo/tau1.0/8\)"
                                         r".*delete it and rerun snakemake"):
        select(partial, EXPERIMENT, "pass@4")
    # a sampler the caller fixes narrows the grid: its own rows suffice
    assert set(select(partial, EXPERIMENT, "pass@4", sampler="ead")["sampler"]) == {"ead"}
