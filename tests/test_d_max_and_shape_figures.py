"""The figures of the authors' revised ablations, drawn from tables only: the d_max sweep
(configs/ablations/d_max_sweep.yaml) and the schedule shapes (configs/ablations/beyond_the_paper.yaml)."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ead.analyses.sampler_schedules import main as schedules_main
from ead.analyses.sampler_schedules import sampler_schedules
from ead.plots import d_max_sweep, schedule_shapes
from ead.rl.aggregate import eval_curves, train_curves
from ead.rl.paired import paired_curves
from ead.schedule import build_schedule
from ead.settings import ConfigError, validate_config
from ead.settings.layering import load_layered_config
from ead.settings.rl import sampler_schedule
from ead.tables import SAMPLER_SCHEDULES, SETTINGS_COLUMNS, TRAIN_METRICS

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = ROOT / "workflow" / "schemas" / "config.schema.yaml"
BEYOND = load_layered_config(ROOT / "configs" / "config.yaml", ROOT / "configs" / "ablations" / "beyond_the_paper.yaml")
D_MAX = load_layered_config(ROOT / "configs" / "config.yaml", ROOT / "configs" / "ablations" / "d_max_sweep.yaml")
FILLER = {"int": 0, "float": 0.0, "str": "x", "id": "x"}


def grid_tables(config, experiment, correct):
    """eval_problems and steps tables of an experiment's cells: per (sampler, seed) the correct counts of 3 problems
    at step 16 (0 at step 0), with each cell's schedule recorded as its cells do."""
    spec = config["rl"]["experiments"][experiment]
    problems, steps = [], []
    for sampler in spec["samplers"]:
        settings = {**{c: FILLER[k] for c, k in SETTINGS_COLUMNS.items()},
                    "schedule_params": json.dumps(sampler_schedule(config, sampler), sort_keys=True)}
        for seed in spec["seeds"]:
            cell = dict(policy=spec["policies"][0], algorithm=spec["algorithms"][0], n=spec["n"][0], sampler=sampler,
                        seed=seed, **settings)
            for step in (0, 16):
                for i, count in enumerate(correct(sampler, seed)):
                    problems.append(dict(cell, step=step, evaluated_with="eval_tau", problem_id=f"q{i}",
                                         num_samples=16, num_correct=count if step else 4, greedy_correct=0.0))
            steps += [dict(cell, step=s, **{m: 0.0 for m in TRAIN_METRICS}) for s in range(1, 17)]
    return pd.DataFrame(problems), pd.DataFrame(steps)


def test_d_max_sweep_maps_the_authors_caps_to_the_testbeds_growth():
    ead, steps = D_MAX["ead"], D_MAX["rl"]["steps"]
    growth = ead["step_factor"] * steps  # d_s grows from d0 = 25 to 105 by step 16
    caps = {name: sampler_schedule(D_MAX, name)["d_max"] for name in ("ead_tis_dmax25", "ead_tis_dmax41",
                                                                       "ead_tis_dmax73")}
    # the authors' 200 / 300 / 500 of a 200 -> 700 range: 0, 0.2, 0.6 of the growth, and every cap clamps in the run
    assert [round((cap - ead["d0"]) / growth, 1) for cap in caps.values()] == [0.0, 0.2, 0.6]
    assert all(cap < ead["d0"] + growth for cap in caps.values())
    assert sampler_schedule(D_MAX, "ead_tis")["d_max"] >= ead["d0"] + growth  # the uncapped reference never clamps
    claims = [c for c in D_MAX["claims"] if c["figure"] == "d_max" and "baseline" in c]
    assert {(c["sampler"], c["metric"]) for c in claims} == {(s, m) for s in caps for m in ("pass@16", "pass@1")}
    assert {c["baseline"] for c in claims} == {"ead_tis"} and "ead_tis" in D_MAX["paired_baselines"]
    # and the frozen cap against the best fixed temperature (D7-D8, tests/test_best_of_claims.py)
    best_of = [c for c in D_MAX["claims"] if c["figure"] == "d_max" and "best_of" in c]
    assert {(c["sampler"], c["metric"]) for c in best_of} == {("ead_tis_dmax25", m) for m in ("pass@16", "pass@1")}
    validate_config(D_MAX, SCHEMA)


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


def test_sampler_schedules_tabulate_each_shape_as_its_cells_sample(tmp_path):
    spec = BEYOND["schedule_shapes"]
    documents = {s: sampler_schedule(BEYOND, s) for s in spec["samplers"]}
    table = sampler_schedules(documents, spec["steps"], spec["max_position"])
    for sampler, document in documents.items():
        for step in spec["steps"]:
            rows = table[(table["sampler"] == sampler) & (table["step"] == step)].sort_values("position")
            expected = build_schedule(document).temperatures(np.arange(spec["max_position"] + 1), step=step)
            assert rows["tau"].to_numpy() == pytest.approx(np.asarray(expected, dtype=float))
    ead = table[(table["sampler"] == "ead_tis") & (table["step"] == 1)]
    mean = table[(table["sampler"] == "ead_mean_matched_tis") & (table["step"] == 1)]
    assert mean["tau"].nunique() == 1  # one temperature per step: negexp's time-average over [0, D]
    decay = 25 + 5 * 1  # D = decay_scale d_s at step 1; the floored negexp averaged over [0, D] (numerically)
    grid = np.linspace(0, decay, 200001)
    assert mean["tau"].iloc[0] == pytest.approx(np.maximum(2.2 - np.exp(grid / decay), 0.1).mean(), abs=1e-4)
    assert len(ead) and ead["tau"].iloc[0] == pytest.approx(1.2)
    with pytest.raises(ValueError, match="sets the temperature from the logits"):
        sampler_schedules({"gate": sampler_schedule(BEYOND, "entropy_gate_tis")}, [1], 8)
    out = tmp_path / "shapes.csv"
    schedules_main(["--schedules", json.dumps(documents), "--steps", "1", "16", "--max-position", "40", "--out",
                    str(out)])
    assert len(SAMPLER_SCHEDULES.read(out)) == 4 * 2 * 41


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


@pytest.mark.parametrize("change, message", [
    (lambda c: c["schedule_shapes"].update(baseline="tau1.2"), r"schedule_shapes.baseline = 'tau1.2' must be one of "
                                                                r"paired_baselines"),
    (lambda c: c["schedule_shapes"].update(samplers=["ead_tis", "entropy_gate_tis"]),
     r"'entropy_gate_tis' is a entropy_aware sampler"),
    (lambda c: c["schedule_shapes"].update(metrics=["pass@8"]), r"'pass@8' needs k in rl.eval.k"),
    (lambda c: c["schedule_shapes"].update(n=4), r"cell \(policy, algorithm, sampler, n\) = \('tiny1m_sharp', 'dapo', "
                                                 r"'ead_tis', 4\) is not in the grid"),
])
def test_schedule_shapes_config_errors_name_the_key(change, message):
    config = load_layered_config(ROOT / "configs" / "config.yaml", ROOT / "configs" / "ablations" /
                                 "beyond_the_paper.yaml")
    change(config)
    with pytest.raises(ConfigError, match=message):
        validate_config(config, SCHEMA)
