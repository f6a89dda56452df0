"""verl's metrics and validation dumps -> our tables (ead.rl.verl.convert), on the constructed run in
tests/fixtures/verl_run; the converter loads no model code."""

import json
import math
import shutil
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

import pandas as pd
import pytest

from ead.metrics import pass_at_k, worst_at_k
from ead.rl.aggregate import eval_curves, train_curves
from ead.rl.verl import convert
from ead.settings.rl import Cell, cell_settings
from ead.tables import TRAIN_METRICS
from tests.conftest import PAPER

ROOT = Path(__file__).resolve().parents[3]


def test_converter_imports_no_torch_transformers_or_cpu_backend():
    code = ("import sys, json; import ead.rl.verl.convert; print(json.dumps(sorted(m for m in sys.modules if "
            "m.split('.')[0] in ('torch', 'transformers', 'vllm', 'verl') or m in ('ead.rl.train', 'ead.evaluation', "
            "'ead.samplers.sample', 'ead.samplers.engines', 'ead.samplers.hf', 'ead.rl.aggregate'))))")
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True,
                                       cwd=ROOT).stdout)
    assert loaded == []


FIXTURE = ROOT / "tests" / "fixtures" / "verl_run"


CELL = Cell("qwen2.5-math-1.5b", "dapo", "ead_tis", 8, 0)


#: What ead.rl.verl.run hands the converter: the cell and its settings columns (as the CPU trainer writes them).
CELL_COLUMNS = {**asdict(CELL), **cell_settings(PAPER, CELL).table_columns()}


DUMP_COUNTS = {0: [12, 3, 0], 2: [15, 6, 1]}  # known correct counts in the dumps (3 problems x 16 samples)


def fixture_lines():
    return [json.loads(line) for line in (FIXTURE / "metrics.jsonl").read_text().splitlines()]


def test_file_logger_jsonl_becomes_steps_table():
    records = convert.read_file_logger([FIXTURE / "metrics.jsonl"])
    steps = convert.steps_table(records, CELL_COLUMNS, entropy_temperature=1.0)
    # every training metric the aggregation reads is a column, as in the CPU backend's steps.csv
    assert set(TRAIN_METRICS) | {"step", "entropy_temperature", *CELL_COLUMNS} <= set(steps.columns)
    assert list(steps.columns).index("entropy_temperature") == list(steps.columns).index("entropy") + 1
    assert (steps["entropy_temperature"] == 1.0).all()
    assert steps["step"].tolist() == [1, 2, 3]  # the step-0 line carries validation only
    by_step = {line["step"]: line["data"] for line in fixture_lines()}
    for _, row in steps.iterrows():
        data = by_step[row["step"]]
        for column, name in convert.STEP_COLUMNS.items():
            if name in data:
                assert row[column] == pytest.approx(data[name]), (column, name)
            else:
                assert math.isnan(row[column]), (column, name)
    for column in ("reward_mean", "entropy", "response_length", "pg_clipfrac", "grad_norm", "tis_weight_mean"):
        assert steps[column].notna().all(), column  # what the figures draw is there
    assert steps[["grad_norm_max", "behaviour_target_log_ratio"]].isna().all().all()  # no verl source
    assert (steps[list(CELL_COLUMNS)] == pd.Series(CELL_COLUMNS)).all().all()


def test_sequence_capped_share_comes_from_verl_only_at_sequence_level():
    """verl's rollout_is_ratio_fraction_high is the sequence share only when rollout_is = sequence; in token-level (and
    uncorrected) cells it counts tokens, so the column stays empty there."""
    line = {"critic/score/mean": 0.5, convert.SEQUENCE_CAPPED_METRIC: 0.0125}
    for tis in ("sequence", "token", "none"):
        steps = convert.steps_table({1: line, 2: {**line, convert.SEQUENCE_CAPPED_METRIC: 0.0}},
                                    {**CELL_COLUMNS, "tis": tis})
        got = steps["tis_capped_sequence_fraction"].tolist()
        if tis == "sequence":
            assert got == [0.0125, 0.0]
            assert steps["tis_capped_fraction"].tolist() == got  # the same verl key, read as sequences here
        else:
            assert all(math.isnan(value) for value in got), tis


def test_validation_dumps_become_per_problem_counts_without_greedy():
    problems = convert.eval_problems_from_dumps(FIXTURE / "validation")
    assert list(problems.columns) == ["step", "evaluated_with", "problem_id", "num_samples", "num_correct",
                                      "greedy_correct", "num_timeouts"]
    assert problems["num_timeouts"].isna().all()  # the fixture's dumps predate the reward's `timeout` key
    assert (problems["evaluated_with"] == "eval_tau").all()
    assert sorted(set(problems["step"])) == [0, 2]
    assert problems["greedy_correct"].isna().all() and (problems["num_samples"] == 16).all()
    for step, counts in DUMP_COUNTS.items():
        assert problems[problems["step"] == step]["num_correct"].tolist() == counts
    ids = {step: list(group["problem_id"]) for step, group in problems.groupby("step")}
    assert ids[0] == ids[2] and len(set(ids[0])) == 3  # one id per prompt, stable across steps


def test_validation_dumps_become_unbiased_eval_rows():
    records = convert.read_file_logger([FIXTURE / "metrics.jsonl"])
    problems = convert.eval_problems_from_dumps(FIXTURE / "validation")
    evaluation = convert.eval_table(records, problems, CELL_COLUMNS, [1, 16])
    assert set(evaluation["estimator"]) == {"unbiased"}
    assert sorted(set(evaluation["step"])) == [0, 2]
    assert set(evaluation["metric"]) == {"pass@1", "worst@1", "pass@16", "worst@16"}  # no greedy_accuracy
    for step, counts in DUMP_COUNTS.items():
        rows = evaluation[evaluation["step"] == step].set_index("metric")
        for k in (1, 16):
            assert rows.loc[f"pass@{k}", "value"] == pytest.approx(pass_at_k([16] * 3, counts, k).mean())
            assert rows.loc[f"worst@{k}", "value"] == pytest.approx(worst_at_k([16] * 3, counts, k).mean())
        assert (rows["ci_low"] <= rows["value"]).all() and (rows["value"] <= rows["ci_high"]).all()
        assert (rows["num_problems"] == 3).all() and (rows["num_samples"] == 16).all()
    assert evaluation.set_index(["step", "metric"]).loc[(2, "pass@16"), "value"] == 1.0


def test_without_dumps_eval_rows_come_from_verls_val_metrics(tmp_path):
    records = convert.read_file_logger([FIXTURE / "metrics.jsonl"])
    no_dumps = convert.eval_problems_from_dumps(tmp_path)
    evaluation = convert.eval_table(records, no_dumps, CELL_COLUMNS, [1, 16])
    assert set(evaluation["estimator"]) == {"verl_bootstrap"} and sorted(set(evaluation["step"])) == [0, 2]
    by_step = {line["step"]: line["data"] for line in fixture_lines()}
    for step in (0, 2):
        rows = evaluation[evaluation["step"] == step].set_index("metric")["value"]
        data = by_step[step]
        assert rows["pass@1"] == rows["worst@1"] == data["val-core/math/acc/mean@16"]
        assert rows["pass@16"] == data["val-core/math/acc/best@16/mean"]
        assert rows["worst@16"] == data["val-aux/math/acc/worst@16/mean"]
    assert evaluation["ci_low"].isna().all()


def test_convert_run_merges_restarted_loggers_and_writes_the_cpu_backends_tables(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run)
    lines = (run / "metrics.jsonl").read_text().splitlines()
    # first attempt logged steps 0-2, the restart (resumed at step 2) logged 2-3 again with new values
    (run / "metrics.1.jsonl").write_text("\n".join(lines[:3]) + "\n")
    restarted = [json.loads(line) for line in lines[2:]]
    restarted[0]["data"]["critic/score/mean"] = 0.99
    (run / "metrics.jsonl").write_text("".join(json.dumps(line) + "\n" for line in restarted))
    out = tmp_path / "out"
    convert.convert_run(run, CELL_COLUMNS, [1, 16], out, entropy_temperature=0.6)
    steps = pd.read_csv(out / "steps.csv")
    assert (steps["entropy_temperature"] == 0.6).all()
    assert steps["step"].tolist() == [1, 2, 3]
    assert steps.set_index("step").loc[2, "reward_mean"] == 0.99
    evaluation = pd.read_csv(out / "eval.csv")
    assert {"step", "metric", "value", "ci_low", "ci_high", *CELL_COLUMNS} <= set(evaluation.columns)
    assert len(evaluation) == 8
    problems = pd.read_csv(out / "eval_problems.csv")
    assert len(problems) == 6 and problems["greedy_correct"].isna().all()
    assert (problems[list(CELL_COLUMNS)] == pd.Series(CELL_COLUMNS)).all().all()
    with pytest.raises(ValueError, match=r"cell columns \['seed'\] missing"):
        convert.convert_run(run, {k: v for k, v in CELL_COLUMNS.items() if k != "seed"}, [1, 16], out)


def test_converted_tables_aggregate_like_the_cpu_backends(tmp_path):
    """ead.rl.aggregate (rule rl_tables) reads the verl tables of two seeds: curves of every figure metric, Pass@k /
    Worst@k from the dumps, and no greedy accuracy (greedy_correct is NaN)."""
    steps, problems = [], []
    for seed in (0, 1):
        out = tmp_path / f"seed{seed}"
        convert.convert_run(FIXTURE, {**CELL_COLUMNS, "seed": seed}, [1, 16], out, entropy_temperature=1.0)
        steps.append(pd.read_csv(out / "steps.csv"))
        problems.append(pd.read_csv(out / "eval_problems.csv"))
    train = train_curves(pd.concat(steps, ignore_index=True))
    assert {"entropy", "response_length", "pg_clipfrac", "grad_norm", "reward_mean", "tis_weight_mean"} <= set(
        train["metric"])
    assert "grad_norm_max" not in set(train["metric"]) and (train["num_seeds"] == 2).all()
    curves = eval_curves(pd.concat(problems, ignore_index=True), [1, 16])
    assert set(curves["metric"]) == {"pass@1", "worst@1", "pass@16", "worst@16", "verl_best@16", "verl_worst@16"}
    assert sorted(set(curves["step"])) == [0, 2] and (curves["num_problems"] == 3).all()
    final = curves[curves["step"] == 2].set_index("metric")["value"]
    assert final["pass@16"] == pytest.approx(pass_at_k([16] * 3, DUMP_COUNTS[2], 16).mean())
    assert (curves["schedule_params"] == CELL_COLUMNS["schedule_params"]).all()


def test_converter_rejects_lines_that_are_not_from_the_file_logger(tmp_path):
    bad = tmp_path / "metrics.jsonl"
    bad.write_text('{"step": 1, "data": {"critic/score/mean": 0.1}}\n{"loss": 3}\n')
    with pytest.raises(ValueError, match=r"metrics.jsonl:2: not a verl file-logger line"):
        convert.read_file_logger([bad])


TRAINING_LINE = '{"step": %d, "data": {"critic/score/mean": 0.%d, "actor/entropy": 1.5}}'


def test_a_torn_last_line_is_dropped_with_a_warning(tmp_path, caplog):
    """The trainer killed mid-append leaves a last line without newline that is not JSON: it used to stop
    the next attempt (resume and conversion) until the line was deleted by hand."""
    run = tmp_path / "run"
    run.mkdir()
    torn = run / "metrics.jsonl"
    torn.write_text(f"{TRAINING_LINE % (1, 1)}\n{TRAINING_LINE % (2, 2)}\n" + (TRAINING_LINE % (3, 3))[:30])
    with caplog.at_level("WARNING", logger="ead.rl.verl.convert"):
        records = convert.read_file_logger([torn])
        assert convert.logged_training_steps(run) == [1, 2]  # what run.py's resume reads
    assert sorted(records) == [1, 2] and records[2]["critic/score/mean"] == 0.2
    assert f"{torn}:3: dropped a torn last line" in caplog.text
    # the same torn line in a previous attempt's file (kept as metrics.1.jsonl on restart) is dropped alike
    torn.rename(run / "metrics.1.jsonl")
    (run / "metrics.jsonl").write_text(f"{TRAINING_LINE % (3, 4)}\n")
    assert convert.logged_training_steps(run) == [1, 2, 3]


@pytest.mark.parametrize("text", [
    f"{TRAINING_LINE % (1, 1)}\n{{\"step\": 2, \"da\n{TRAINING_LINE % (3, 3)}\n",  # broken line in the middle
    f"{TRAINING_LINE % (1, 1)}\n{{\"step\": 2, \"da\n",  # a broken last line that was finished (newline)
])
def test_a_bad_line_that_is_not_a_torn_end_still_fails_naming_file_and_line(tmp_path, text):
    bad = tmp_path / "metrics.jsonl"
    bad.write_text(text)
    with pytest.raises(ValueError, match=rf"{bad}:2: not a verl file-logger line"):
        convert.read_file_logger([bad])


def test_validation_dumps_count_the_rewards_timeouts(tmp_path):
    """Our reward's `timeout` key (ead.rl.verl.reward) becomes num_timeouts per problem."""
    lines = [{"input": "q1", "output": "a", "score": 1.0, "acc": 1.0, "status": "correct", "timeout": 0.0},
             {"input": "q1", "output": "b", "score": 0.0, "acc": 0.0, "status": "timeout", "timeout": 1.0},
             {"input": "q2", "output": "c", "score": 0.0, "acc": 0.0, "status": "timeout", "timeout": 1.0},
             {"input": "q2", "output": "d", "score": 0.0, "acc": 0.0, "status": "timeout", "timeout": 1.0}]
    (tmp_path / "4.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    problems = convert.eval_problems_from_dumps(tmp_path)
    assert problems[["num_samples", "num_correct", "num_timeouts"]].values.tolist() == [[2, 1, 1.0], [2, 0, 2.0]]
