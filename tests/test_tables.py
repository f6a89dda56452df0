"""The results contract (ead.tables): declarations validate on write and read, and the verl converter loads no model
code (it depends on the contract, never on the CPU trainer or the evaluation job)."""

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from ead import tables
from ead.tables import EVAL_PROBLEMS, STEPS, TABLES, Table, TableError

ROOT = Path(__file__).resolve().parents[1]

CELL = {"policy": "tiny1m", "algorithm": "dapo", "sampler": "ead", "n": 8, "seed": 0, "lr": 5e-5, "tis": "none",
        "tis_cap": 2.0, "loss_mode": "vanilla", "schedule_params": '{"name": "ead"}',
        "fixed_tau_trains_at": "behaviour", "eval_tau": 1.0, "prompts_per_step": 16, "mini_batches": 2}


def problems_table():
    return pd.DataFrame({"step": [0, 0], "evaluated_with": "eval_tau", "problem_id": ["a", "b"], "num_samples": [4, 4],
                         "num_correct": [1.0, 0.0],
                         "greedy_correct": [1.0, 0.0]}).assign(**CELL)


def test_converter_imports_no_torch_transformers_or_cpu_backend():
    code = ("import sys, json; import ead.rl.verl.convert; print(json.dumps(sorted(m for m in sys.modules if "
            "m.split('.')[0] in ('torch', 'transformers', 'vllm', 'verl') or m in ('ead.rl.train', 'ead.evaluation', "
            "'ead.samplers.sample', 'ead.samplers.engines', 'ead.samplers.hf', 'ead.rl.aggregate'))))")
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True,
                                       cwd=ROOT).stdout)
    assert loaded == []


def test_backends_share_the_contracts_columns():
    from ead.rl import aggregate, train
    from ead.rl.verl import convert
    from ead.settings.layering import load_layered_config
    from ead.settings.rl import Cell, cell_settings

    settings = cell_settings(load_layered_config(ROOT / "configs" / "config.yaml"), Cell("tiny1m", "dapo", "ead", 8, 0))
    assert list(settings.cell_columns()) == list(tables.CELL_COLUMNS) and convert.CELL_COLUMNS is tables.CELL_COLUMNS
    assert train.PROBLEM_COLUMNS is convert.PROBLEM_COLUMNS is tables.PROBLEM_COLUMNS
    assert aggregate.TRAIN_METRICS is convert.TRAIN_METRICS is tables.TRAIN_METRICS
    assert set(convert.STEP_COLUMNS) <= set(STEPS.columns) | set(STEPS.optional) | {"actor_lr"}


def test_settings_columns_are_what_the_grid_writes():
    from ead.settings.layering import load_layered_config
    from ead.settings.rl import Cell, cell_settings

    config = load_layered_config(ROOT / "configs" / "config.yaml")
    columns = cell_settings(config, Cell("tiny1m", "dapo", "ead_tis", 8, 0)).table_columns()
    assert list(columns) == list(tables.SETTINGS_COLUMNS)


def test_write_then_read_round_trips(tmp_path):
    path = tmp_path / "eval_problems.csv"
    EVAL_PROBLEMS.write(problems_table(), path)
    back = EVAL_PROBLEMS.read(path)
    assert back["num_timeouts"].isna().all()  # optional: added empty to a table written without it
    pd.testing.assert_frame_equal(back.drop(columns="num_timeouts"), problems_table(), check_dtype=False)


def test_missing_column_names_the_file_and_the_column(tmp_path):
    path = tmp_path / "eval_problems.csv"
    with pytest.raises(TableError, match=r"eval_problems\.csv.*missing column\(s\) \['num_correct'\]"):
        EVAL_PROBLEMS.write(problems_table().drop(columns="num_correct"), path)
    assert not path.exists()  # nothing invalid is written
    problems_table().drop(columns="num_correct").to_csv(path, index=False)
    with pytest.raises(TableError, match=r"eval_problems\.csv.*num_correct"):
        EVAL_PROBLEMS.read(path)


@pytest.mark.parametrize(("column", "value", "kind"), [("num_samples", 2.5, "int"),
                                                       ("prompts_per_step", None, "int"),
                                                       ("greedy_correct", "yes", "float"), ("policy", 3, "str"),
                                                       ("step", "zero", "int")])
def test_wrong_kind_names_the_file_and_the_column(tmp_path, column, value, kind):
    """An empty value in an int column that is also finite (e.g. num_samples) is a non-finite value instead:
    tests/test_table_keys.py."""
    table = problems_table()
    table[column] = [value, value]
    path = tmp_path / "eval_problems.csv"
    with pytest.raises(TableError, match=rf"eval_problems\.csv.*column '{column}' must be {kind}"):
        EVAL_PROBLEMS.write(table, path)
    table.to_csv(path, index=False)
    with pytest.raises(TableError, match=rf"eval_problems\.csv.*column '{column}' must be {kind}"):
        EVAL_PROBLEMS.read(path)


def test_an_array_column_round_trips_through_parquet_and_rejects_non_numbers(tmp_path):
    table = Table("ragged", {"prompt_id": "id", "entropies": "array"})
    path = tmp_path / "ragged.parquet"
    table.write(pd.DataFrame({"prompt_id": ["q0", "q1"], "entropies": [[0.5, 1.25], []]}), path)
    assert [list(e) for e in table.read(path)["entropies"]] == [[0.5, 1.25], []]
    with pytest.raises(TableError, match="column 'entropies' must be array"):
        table.validate(pd.DataFrame({"prompt_id": ["q0"], "entropies": [["high"]]}))
    with pytest.raises(TableError, match="column 'entropies' must be array"):
        table.validate(pd.DataFrame({"prompt_id": ["q0"], "entropies": [0.5]}))


def test_missing_greedy_and_empty_tables_are_valid(tmp_path):
    table = problems_table().assign(greedy_correct=float("nan"))  # the verl backend has no greedy pass
    EVAL_PROBLEMS.write(table, tmp_path / "a.csv")
    EVAL_PROBLEMS.read(tmp_path / "a.csv")
    empty = pd.DataFrame(columns=list(EVAL_PROBLEMS.columns))  # a verl run without validation dumps
    EVAL_PROBLEMS.write(empty, tmp_path / "b.csv")
    EVAL_PROBLEMS.read(tmp_path / "b.csv")


def test_declarations_are_well_formed():
    assert set(TABLES) == {"steps", "eval_problems", "eval", "train_curves", "eval_curves", "base_problems",
                           "base_summary", "schedule_table", "entropy_by_position", "entropy_by_role", "forking",
                           "majority_scaling",
                           "entropy_by_position_samples", "forking_samples", "majority_scaling_samples",
                           "premises", "premise_verdicts", "rl_learns", "claims", "paired_curves",
                           "sampler_schedules", "inference_only", "inference_only_headline", "measured_schedule"}
    with pytest.raises(ValueError, match="unknown column kinds"):
        Table("bad", {"x": "number"})


def test_a_workflow_job_stamps_its_profile_into_every_table_it_writes(tmp_path, monkeypatch):
    path = tmp_path / "eval_problems.csv"
    monkeypatch.delenv(tables.PROFILE_ENV, raising=False)
    EVAL_PROBLEMS.write(problems_table(), path)
    assert tables.PROFILE_COLUMN not in pd.read_csv(path).columns  # outside the workflow: no profile to record
    monkeypatch.setenv(tables.PROFILE_ENV, "smoke")
    EVAL_PROBLEMS.write(problems_table(), path)
    assert set(EVAL_PROBLEMS.read(path)[tables.PROFILE_COLUMN]) == {"smoke"}
    with pytest.raises(TableError, match="column 'profile' must be str"):
        EVAL_PROBLEMS.validate(problems_table().assign(profile=3))


def test_figures_record_their_profile(tmp_path, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from PIL import Image

    from ead.plots.style import save_figure

    monkeypatch.setenv(tables.PROFILE_ENV, "smoke")
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    save_figure(fig, str(tmp_path / "f.png"), str(tmp_path / "f.pdf"))
    assert Image.open(tmp_path / "f.png").text["ead-profile"] == "smoke"
    assert b"ead-profile=smoke" in (tmp_path / "f.pdf").read_bytes()


def test_an_optional_column_is_added_empty_to_older_tables_and_checked_where_present(tmp_path):
    """A column added after results were written (e.g. the claims' baseline_algorithm) leaves those tables readable."""
    table = Table("t", {"a": "int"}, optional={"b": "str"})
    path = tmp_path / "old.csv"
    pd.DataFrame({"a": [1, 2]}).to_csv(path, index=False)
    read = table.read(path)
    assert list(read.columns) == ["a", "b"] and read["b"].isna().all()
    table.validate(pd.DataFrame({"a": [1], "b": ["x"]}))
    with pytest.raises(TableError, match=r"column 'b' must be str"):
        table.validate(pd.DataFrame({"a": [1], "b": [2.5]}))
    with pytest.raises(ValueError, match="unknown column kinds"):
        Table("t", {"a": "int"}, optional={"b": "text"})


# --- completeness --------------------------------------------------------------------------------------------------
def steps_table(steps, **cell):
    row = {metric: 0.5 for metric in tables.TRAIN_METRICS}
    return pd.DataFrame([{"step": step, **row} for step in steps]).assign(**{**CELL, **cell})


def eval_problems_table(evaluations, problems=("a", "b", "c"), **cell):
    """Rows for each (evaluated_with, step) in ``evaluations``, every problem (or the ones a mapping gives)."""
    rows = []
    for evaluated_with, step in evaluations:
        wanted = problems.get((evaluated_with, step), problems["all"]) if isinstance(problems, dict) else problems
        rows += [{"step": step, "evaluated_with": evaluated_with, "problem_id": p, "num_samples": 4, "num_correct": 1,
                  "greedy_correct": 1.0} for p in wanted]
    return pd.DataFrame(rows).assign(**{**CELL, **cell})


EVALUATIONS = [("eval_tau", 0), ("eval_tau", 2), ("eval_tau", 4), ("eval_tau", 5), ("own_sampler", 5)]


def test_a_cell_cut_to_its_first_steps_fails_naming_the_file_and_the_steps(tmp_path):
    """A clean cut of steps.csv used to pass and silently shorten the train curves."""
    whole, cut = tmp_path / "seed0" / "steps.csv", tmp_path / "seed1" / "steps.csv"
    STEPS.write(steps_table(range(1, 6)), whole)
    STEPS.write(steps_table([1], seed=1), cut)
    expect = {"step": tables.expected_steps(5)}
    assert len(STEPS.read(whole, expect)) == 5
    with pytest.raises(tables.IncompleteTableError,
                       match=rf"{cut} \(steps table\): incomplete: policy=tiny1m, .*seed=1 has no row for step 2-5 "
                             r"\(expected from the config: 5 values, found 1\).*delete the file and rerun snakemake"):
        STEPS.read(cut, expect)
    # without the config's extent, a cell is held to what the other cells hold
    with pytest.raises(tables.IncompleteTableError, match=rf"{cut} .* step 2-5 \(expected from the other rows"):
        STEPS.read_all([whole, cut])


def test_a_missing_evaluation_step_or_problem_fails_naming_the_file(tmp_path):
    expect = {"step": tables.expected_eval_steps(5, 2, own_sampler=True), "problem_id": None}
    path = tmp_path / "eval_problems.csv"
    EVAL_PROBLEMS.write(eval_problems_table(EVALUATIONS), path)
    assert len(EVAL_PROBLEMS.read(path, expect)) == 15
    EVAL_PROBLEMS.write(eval_problems_table(EVALUATIONS[:2] + EVALUATIONS[3:]), path)  # no step 4
    with pytest.raises(tables.IncompleteTableError, match=rf"{path} .*evaluated_with=eval_tau has no row for step 4"):
        EVAL_PROBLEMS.read(path, expect)
    EVAL_PROBLEMS.write(eval_problems_table(EVALUATIONS[:4]), path)  # no own-sampler evaluation
    with pytest.raises(tables.IncompleteTableError, match=r"evaluated_with=own_sampler has no row for step 5"):
        EVAL_PROBLEMS.read(path, {"step": tables.expected_eval_steps(5, 2, own_sampler=True)})
    # one problem missing from one evaluation (it used to show only as num_problems 3 instead of 4)
    EVAL_PROBLEMS.write(eval_problems_table(EVALUATIONS, {"all": "abc", ("eval_tau", 4): "ac"}), path)
    with pytest.raises(tables.IncompleteTableError,
                       match=rf"{path} .*evaluated_with=eval_tau, step=4 has no row for problem_id 'b' \(expected from "
                             r"the other rows of the same policy: 3 values, found 2\)"):
        EVAL_PROBLEMS.read(path, expect)
    with pytest.raises(ValueError, match=r"no completeness rule for \['seed'\]"):
        EVAL_PROBLEMS.read(path, {"seed": [0]})


def test_aggregation_and_claims_refuse_an_incomplete_cell(tmp_path):
    from ead.claims import rl as rl_claims
    from ead.rl import aggregate

    steps = [tmp_path / f"seed{seed}" / "steps.csv" for seed in (0, 1)]
    problems = [tmp_path / f"seed{seed}" / "eval_problems.csv" for seed in (0, 1)]
    for seed in (0, 1):
        STEPS.write(steps_table(range(1, 6) if seed == 0 else range(1, 3), seed=seed), steps[seed])
        EVAL_PROBLEMS.write(eval_problems_table(EVALUATIONS, seed=seed), problems[seed])
    extent = ["--expect-steps", "5", "--eval-every", "2", "--own-sampler"]
    files = ["--steps", *map(str, steps), "--eval-problems", *map(str, problems)]
    with pytest.raises(tables.IncompleteTableError, match=rf"{steps[1]} .* step 3-5"):
        aggregate.main([*files, "--k", "1", "--seed", "0", "--train-curves", str(tmp_path / "t.csv"),
                        "--eval-curves", str(tmp_path / "e.csv"), *extent])
    with pytest.raises(tables.IncompleteTableError, match=rf"{steps[1]} .* step 3-5"):
        rl_claims.main([*files, "--claims", "[]", "--window", "2", "--resamples", "10", "--seed", "0",
                      "--analysis-claims", "--out", str(tmp_path / "claims.csv"), *extent])
    STEPS.write(steps_table(range(1, 6), seed=1), steps[1])
    aggregate.main([*files, "--k", "1", "--seed", "0", "--train-curves", str(tmp_path / "t.csv"),
                    "--eval-curves", str(tmp_path / "e.csv"), *extent])
    assert sorted(pd.read_csv(tmp_path / "t.csv")["step"].unique()) == [1, 2, 3, 4, 5]


def test_the_evaluated_steps_are_one_rule_for_the_trainer_and_the_completeness_check():
    from ead.tables import evaluated_steps, expected_eval_steps

    assert evaluated_steps(10, 4) == [0, 4, 8, 10] and evaluated_steps(8, 4) == [0, 4, 8]
    assert evaluated_steps(3, 8) == [0, 3]  # the last step is always evaluated
    with pytest.raises(ValueError, match=r"rl\.eval\.every must be >= 1, got 0"):
        evaluated_steps(4, 0)
    expected = expected_eval_steps(10, 4, own_sampler=True)
    assert expected({"evaluated_with": "eval_tau"}) == evaluated_steps(10, 4)
    assert expected({"evaluated_with": "own_sampler"}) == [10]
