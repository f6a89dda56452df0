"""The results contract (ead.tables): declarations validate on write and read; a duplicated row or a NaN / inf
metric in any table is refused by every reader with one message naming the file, the column or key, and the rows."""

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ead import tables
from ead.tables import (
    EVAL_PROBLEMS,
    STEPS,
    TABLES,
    DuplicateRowError,
    Empty,
    NonFiniteValueError,
    OutOfRangeError,
    Table,
    TableError,
)

ROOT = Path(__file__).resolve().parents[1]


EXTENT = ["--expect-steps", "5", "--eval-every", "2", "--own-sampler"]


SAMPLERS = ("ead", "tau1.0")


@pytest.fixture
def grid(tmp_path):
    """Two one-seed cells (ead and tau1.0) with steps 1..5 and every evaluation: paths by sampler."""
    paths = {}
    for sampler in SAMPLERS:
        cell = tmp_path / sampler / "seed0"
        steps = steps_table(range(1, 6), sampler=sampler).assign(entropy=[0.9, 0.8, 0.7, 0.6, 0.5])
        STEPS.write(steps, cell / "steps.csv")
        EVAL_PROBLEMS.write(eval_problems_table(EVALUATIONS, sampler=sampler), cell / "eval_problems.csv")
        paths[sampler] = (cell / "steps.csv", cell / "eval_problems.csv")
    return paths


def files(grid):
    return ["--steps", *(str(grid[s][0]) for s in SAMPLERS), "--eval-problems", *(str(grid[s][1]) for s in SAMPLERS)]


def run_aggregate(grid, tmp_path):
    from ead.rl import aggregate

    aggregate.main([*files(grid), "--k", "1", "2", "--seed", "0", "--train-curves", str(tmp_path / "train.csv"),
                    "--eval-curves", str(tmp_path / "eval.csv"), *EXTENT])


def run_claims(grid, tmp_path):
    import json

    from ead.claims import rl as rl_claims

    claim = {"id": "C7", "figure": "6", "statement": "s", "policy": CELL["policy"], "algorithm": CELL["algorithm"],
             "n": CELL["n"], "sampler": "ead", "baseline": "tau1.0", "metric": "entropy"}
    rl_claims.main([*files(grid), "--claims", json.dumps([claim]), "--window", "2", "--resamples", "10", "--seed", "0",
                  "--analysis-claims", "--out", str(tmp_path / "claims.csv"), *EXTENT])


def run_paired(grid, tmp_path):
    from ead.rl import paired

    paired.main(["--eval-problems", *(str(grid[s][1]) for s in SAMPLERS), "--baselines", "tau1.0", "--k", "1",
                 "--resamples", "10", "--seed", "0", "--out", str(tmp_path / "paired.csv")])


def run_cell_eval(grid, tmp_path):
    from ead.rl import cell_eval

    cell_eval.main(["--eval-problems", str(grid["ead"][1]), "--k", "1", "--seed", "0", "--out",
                    str(tmp_path / "eval_summary.csv")])


def edit(path, change):
    """Edit a written CSV by hand (bypassing the contract), as a damaged copy would be."""
    table = pd.read_csv(path)
    change(table).to_csv(path, index=False)


def append_copy_of(row_filter, **changes):
    def change(table):
        row = table[row_filter(table)].iloc[[0]].assign(**changes)
        return pd.concat([table, row], ignore_index=True)
    return change


def test_the_grid_as_written_passes_every_reader(grid, tmp_path):
    run_aggregate(grid, tmp_path)
    run_claims(grid, tmp_path)
    run_paired(grid, tmp_path)
    run_cell_eval(grid, tmp_path)
    train = pd.read_csv(tmp_path / "train.csv")
    assert (train["num_seeds"] == 1).all()


@pytest.mark.parametrize("changes", [{}, {"entropy": 5.0}], ids=["identical", "edited_entropy"])
@pytest.mark.parametrize("reader", [run_aggregate, run_claims])
def test_a_duplicated_step_row_is_refused_naming_the_file_and_rows(grid, tmp_path, changes, reader):
    """A copy of the step-2 row (identical, or with entropy 5.0) used to pass and give num_seeds 2
    (and a CI up to 5.0) for a one-seed cell."""
    path = grid["ead"][0]
    edit(path, append_copy_of(lambda t: t["step"] == 2, **changes))
    with pytest.raises(DuplicateRowError,
                       match=rf"^{path} \(steps table\): duplicated row: 2 rows share the key \(policy, algorithm, "
                             r"sampler, n, seed, step\) at line 3 \(policy=tiny1m, algorithm=dapo, sampler=ead, n=8, "
                             r"seed=0, step=2\), line 7 \(.*step=2\).*delete it and rerun snakemake"):
        reader(grid, tmp_path)


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
@pytest.mark.parametrize("reader", [run_aggregate, run_claims])
def test_a_nan_or_inf_entropy_is_refused_naming_file_column_and_row(grid, tmp_path, value, reader):
    """A NaN step-2 entropy used to drop the curve's point silently and change claim C7's effect."""
    path = grid["ead"][0]
    edit(path, lambda t: t.assign(entropy=np.where(t["step"] == 2, float(value), t["entropy"])))
    with pytest.raises(NonFiniteValueError,
                       match=rf"^{path} \(steps table\): column 'entropy' must be a finite number, got {value} at "
                             r"line 3 \(policy=tiny1m, .*step=2\);"):
        reader(grid, tmp_path)


def at_step_2_problem_b(table):
    return (table["step"] == 2) & (table["problem_id"] == "b")


@pytest.mark.parametrize("reader", [run_aggregate, run_paired, run_cell_eval])
def test_an_empty_count_is_refused_as_non_finite_naming_file_column_and_line(grid, tmp_path, reader):
    """num_correct is an int column and a finite one. An empty value makes pandas read the column as float64, which
    the kind check used to refuse as "must be int, got dtype float64 (e.g. 3.0)": a valid count and no line."""
    path = grid["ead"][1]
    edit(path, lambda t: t.assign(num_correct=t["num_correct"].mask(at_step_2_problem_b(t))))
    with pytest.raises(NonFiniteValueError,
                       match=rf"^{path} \(eval_problems table\): column 'num_correct' must be a finite number, got nan "
                             r"at line 6 \(policy=tiny1m, .*step=2, evaluated_with=eval_tau, problem_id=b\); the file "
                             r"was edited"):
        reader(grid, tmp_path)


def test_a_count_empty_in_every_row_is_refused_as_non_finite(grid):
    path = grid["ead"][1]
    edit(path, lambda t: t.assign(num_correct=math.nan))
    with pytest.raises(NonFiniteValueError, match=r"column 'num_correct' must be a finite number, got nan at line 2 "
                                                  r"\(.*problem_id=a\), line 3 \(.*\), line 4 \(.*\) and 12 more;"):
        EVAL_PROBLEMS.read(path)


def test_an_empty_value_in_an_int_column_that_is_not_finite_names_the_column_and_lines(grid, tmp_path):
    path = grid["ead"][1]
    edit(path, lambda t: t.assign(prompts_per_step=t["prompts_per_step"].mask(t["step"] == 2)))
    with pytest.raises(TableError, match=rf"^{path} \(eval_problems table\): column 'prompts_per_step' must be int, "
                                         r"got an empty value at line 5 \(.*step=2, evaluated_with=eval_tau, "
                                         r"problem_id=a\), line 6 \(.*problem_id=b\), line 7 \(.*problem_id=c\); the "
                                         r"file was edited") as refused:
        EVAL_PROBLEMS.read(path)
    assert not isinstance(refused.value, NonFiniteValueError)
    # a table in memory, partly or wholly empty, is refused the same way (rows by number: no CSV lines), and not written
    counts = Table("counts", {"label": "str", "count": "int"}, keys=("label",))
    with pytest.raises(TableError, match=r"^counts table: column 'count' must be int, got an empty value at row 2 "
                                         r"\(label=y\);"):
        counts.validate(pd.DataFrame({"label": ["x", "y"], "count": [1.0, math.nan]}))
    with pytest.raises(TableError, match=r"^counts table: column 'count' must be int, got an empty value at row 1 "
                                         r"\(label=x\), row 2 \(label=y\);"):
        counts.validate(pd.DataFrame({"label": ["x", "y"], "count": [None, None]}))
    with pytest.raises(TableError, match=r"column 'count' must be int, got an empty value at line 3 \(label=y\)"):
        counts.write(pd.DataFrame({"label": ["x", "y"], "count": [1.0, math.nan]}), tmp_path / "counts.csv")
    assert not (tmp_path / "counts.csv").exists()
    with pytest.raises(ValueError, match=r"empty values declared for int column\(s\) \['count'\]"):
        Table("t", {"count": "int"}, finite=("count",), empty={"count": Empty("because")})


@pytest.mark.parametrize("value", ["2.5", "many"])
def test_a_non_whole_or_non_numeric_count_is_still_a_kind_error_showing_that_value(grid, value):
    path = grid["ead"][1]
    edit(path, lambda t: t.assign(num_correct=t["num_correct"].astype(object).mask(at_step_2_problem_b(t), value)))
    shown = re.escape(value if value == "2.5" else repr(value))
    with pytest.raises(TableError, match=rf"^{path} \(eval_problems table\): column 'num_correct' must be int, got "
                                         rf"dtype \w+ \(e\.g\. {shown}\)$") as refused:
        EVAL_PROBLEMS.read(path)
    assert not isinstance(refused.value, NonFiniteValueError)


@pytest.mark.parametrize("reader", [run_aggregate, run_claims, run_paired, run_cell_eval])
def test_a_duplicated_problem_row_is_refused_naming_the_file(grid, tmp_path, reader):
    """A duplicated own-sampler row with num_correct = num_samples passed aggregation (num_problems
    4 for a 3-problem set); rl.paired / claims.rl refused it with "... not evaluated on the same problems ..." naming
    no file."""
    path = grid["ead"][1]
    edit(path, append_copy_of(lambda t: t["evaluated_with"] == "own_sampler", num_correct=4))
    with pytest.raises(DuplicateRowError,
                       match=rf"^{path} \(eval_problems table\): duplicated row: 2 rows share the key \(policy, "
                             r"algorithm, sampler, n, seed, step, evaluated_with, problem_id\) at line 14 \(.*"
                             r"evaluated_with=own_sampler, problem_id=a\), line 17"):
        reader(grid, tmp_path)


def test_a_cell_copied_to_another_seed_is_refused_naming_both_files(grid, tmp_path):
    """Each file alone is sound, but two files hold the same cell (a seed directory copied without its seed)."""
    copy = tmp_path / "ead" / "seed1" / "steps.csv"
    copy.parent.mkdir()
    copy.write_bytes(grid["ead"][0].read_bytes())
    with pytest.raises(DuplicateRowError, match=rf"^{grid['ead'][0]} and {copy} \(steps table\): duplicated row: both "
                                                r"files hold the key \(policy=tiny1m, .*seed=0, step=1\)"):
        STEPS.read_all([grid["ead"][0], copy])


def test_a_writer_cannot_write_a_duplicated_row_or_a_nan_metric(tmp_path):
    with pytest.raises(DuplicateRowError, match=r"steps.csv \(steps table\): duplicated row: 2 rows"):
        STEPS.write(steps_table([1, 1, 2]), tmp_path / "steps.csv")
    with pytest.raises(NonFiniteValueError, match=r"column 'reward_mean' must be a finite number, got nan at line 3"):
        STEPS.write(steps_table([1, 2]).assign(reward_mean=[0.5, math.nan]), tmp_path / "steps.csv")
    assert not (tmp_path / "steps.csv").exists()


def test_a_metric_a_backend_does_not_record_may_be_empty_in_the_whole_file_only(tmp_path):
    """verl records no grad_norm_max: empty in every row is declared; empty in some rows is a broken file."""
    path = tmp_path / "steps.csv"
    STEPS.write(steps_table([1, 2, 3]).assign(grad_norm_max=math.nan), path)
    assert STEPS.read(path)["grad_norm_max"].isna().all()
    with pytest.raises(NonFiniteValueError, match=r"column 'grad_norm_max' must be a finite number \(it may be empty "
                                                  r"only in a whole file, where the backend does not record"):
        STEPS.write(steps_table([1, 2, 3]).assign(grad_norm_max=[1.0, math.nan, 2.0]), path)
    # greedy_correct may be empty row by row (own-sampler rows have no greedy answer), but never infinite
    problems = tmp_path / "eval_problems.csv"
    table = eval_problems_table(EVALUATIONS)
    EVAL_PROBLEMS.write(table.assign(greedy_correct=np.where(table["evaluated_with"] == "own_sampler", math.nan, 1.0)),
                        problems)
    with pytest.raises(NonFiniteValueError, match=r"column 'greedy_correct' must be a finite number.*got inf"):
        EVAL_PROBLEMS.write(table.assign(greedy_correct=np.inf), problems)


def test_a_valid_table_reads_exactly_as_written(grid):
    """The checks refuse; they never change a value."""
    written = steps_table(range(1, 6), sampler="ead").assign(entropy=[0.9, 0.8, 0.7, 0.6, 0.5])
    read = STEPS.read(grid["ead"][0])
    pd.testing.assert_frame_equal(read[written.columns], written, check_dtype=False)


# --- every declared table ------------------------------------------------------------------------------------------
VALUES = {"int": 1, "float": 0.5, "str": "x", "id": "p", "array": [0.5, 0.25]}


def valid_rows(table: Table, count: int = 3) -> pd.DataFrame:
    """``count`` rows of every declared column, distinct in every key column."""
    declared = {**table.columns, **table.optional}
    rows = []
    for index in range(count):
        row = {column: VALUES[kind] for column, kind in declared.items()}
        for column in table.keys:
            row[column] = index if declared[column] in ("int", "float") else f"{row[column]}{index}"
        rows.append(row)
    return pd.DataFrame(rows)


def test_every_table_declares_its_keys_and_finite_columns():
    for table in TABLES.values():
        assert table.keys, f"{table.name} declares no key columns"
        declared = {**table.columns, **table.optional}
        assert set(table.keys) <= set(declared) and set(table.finite) <= set(declared)
        assert all(isinstance(reason, Empty) and reason.reason for reason in table.empty.values())
    with pytest.raises(ValueError, match=r"empty values declared for \['b'\], which are not finite columns"):
        Table("t", {"a": "float", "b": "float"}, keys=("a",), empty={"b": Empty("because")})
    with pytest.raises(ValueError, match=r"finite column\(s\) \['a'\] are not numeric"):
        Table("t", {"a": "str"}, finite=("a",))


@pytest.mark.parametrize("name", sorted(TABLES))
def test_every_reader_refuses_a_duplicated_key_and_a_non_finite_value(tmp_path, name):
    """Every job reads its tables through Table.read (aggregate, paired, claims, cell_eval, the analyses' summary
    tables and claims, ead.summary, the figures): the check there covers them all."""
    table = TABLES[name]
    suffix = ".parquet" if "array" in {**table.columns, **table.optional}.values() else ".csv"
    path = tmp_path / f"{name}{suffix}"
    rows = valid_rows(table)
    table.write(rows, path)
    assert len(table.read(path)) == 3
    from ead.io import write_table

    write_table(pd.concat([rows, rows.iloc[[1]]], ignore_index=True), path)  # past the contract, as an edit would
    with pytest.raises(DuplicateRowError, match=rf"^{path} \({name} table\): duplicated row: 2 rows share the key"):
        table.read(path)
    strict = [column for column in table.finite if column not in table.empty]
    if strict:
        column = strict[0]
        write_table(rows.assign(**{column: [0.5, math.inf, 0.5] if table.columns.get(column, table.optional.get(
            column)) == "float" else [1, math.inf, 1]}), path)
        where = "line 3" if suffix == ".csv" else "row 2"
        with pytest.raises(NonFiniteValueError,
                           match=rf"^{path} \({name} table\): column '{column}' must be a finite number, got inf "
                                 rf"at {where} "):
            table.read(path)


@pytest.mark.parametrize("reader", [run_aggregate, run_claims, run_paired, run_cell_eval])
@pytest.mark.parametrize(("count", "message"), [
    (9, r"column 'num_correct' must be between 0 and num_samples, got 9 \(num_samples=8\) at line 6 "
        r"\(policy=tiny1m, .*step=2, evaluated_with=eval_tau, problem_id=b\); the file was edited"),
    (-1, r"column 'num_correct' must be between 0 and num_samples, got -1 \(num_samples=8\) at line 6 "),
])
def test_a_count_outside_its_bounds_is_refused_where_the_table_is_read_naming_file_and_line(grid, tmp_path, reader,
                                                                                            count, message):
    """0 <= num_correct <= num_samples is declared with the table (ead.tables.COUNT_BOUNDS), so every reader refuses a
    broken count alike, naming the file and line, instead of the estimator's bare "need 0 <= correct <= n"."""
    path = grid["ead"][1]
    edit(path, lambda t: t.assign(num_samples=8, num_correct=t["num_correct"].mask(at_step_2_problem_b(t), count)))
    with pytest.raises(OutOfRangeError, match=rf"^{path} \(eval_problems table\): " + message):
        reader(grid, tmp_path)


def test_bounds_name_numeric_columns_and_a_table_in_memory_is_refused_by_row():
    from ead.tables import Bound

    with pytest.raises(ValueError, match=r"bounds name column\(s\) \['label'\] that are not numeric"):
        Table("counts", {"label": "str", "count": "int"}, bounds=(Bound("count", high="label"),))
    counts = Table("counts", {"label": "str", "count": "int", "of": "int"}, keys=("label",),
                   bounds=(Bound("count", low=0, high="of"), Bound("of", low=1)))
    with pytest.raises(OutOfRangeError, match=r"^counts table: column 'of' must be >= 1, got 0 at row 2 \(label=y\)"):
        counts.validate(pd.DataFrame({"label": ["x", "y"], "count": [0, 0], "of": [1, 0]}))
    counts.validate(pd.DataFrame({"label": ["x", "y"], "count": [0, 2], "of": [1, 2]}))


CELL = {"policy": "tiny1m", "algorithm": "dapo", "sampler": "ead", "n": 8, "seed": 0, "lr": 5e-5, "tis": "none",
        "tis_cap": 2.0, "loss_mode": "vanilla", "schedule_params": '{"name": "ead"}',
        "fixed_tau_trains_at": "behaviour", "eval_tau": 1.0, "prompts_per_step": 16, "mini_batches": 2}


def problems_table():
    return pd.DataFrame({"step": [0, 0], "evaluated_with": "eval_tau", "problem_id": ["a", "b"], "num_samples": [4, 4],
                         "num_correct": [1.0, 0.0],
                         "greedy_correct": [1.0, 0.0]}).assign(**CELL)


def test_backends_share_the_contracts_columns():
    from ead.rl import aggregate, train
    from ead.rl.verl import convert
    from ead.settings import load_layered_config
    from ead.settings.rl import Cell, cell_settings

    settings = cell_settings(load_layered_config(ROOT / "configs" / "config.yaml"), Cell("tiny1m", "dapo", "ead", 8, 0))
    assert list(settings.cell_columns()) == list(tables.CELL_COLUMNS) and convert.CELL_COLUMNS is tables.CELL_COLUMNS
    assert train.PROBLEM_COLUMNS is convert.PROBLEM_COLUMNS is tables.PROBLEM_COLUMNS
    assert aggregate.TRAIN_METRICS is convert.TRAIN_METRICS is tables.TRAIN_METRICS
    assert set(convert.STEP_COLUMNS) <= set(STEPS.columns) | set(STEPS.optional) | {"actor_lr"}


def test_settings_columns_are_what_the_grid_writes():
    from ead.settings import load_layered_config
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
    tests/test_tables.py."""
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
                           "premises", "premise_verdicts", "premises_by_group", "rl_learns", "premise_tradeoff",
                           "premise_tradeoff_rho", "claims", "paired_curves",
                           "sampler_schedules", "inference_only", "inference_only_headline", "measured_schedule",
                           "signal_by_phase", "eval_by_group", "fingerprint", "machine_spread"}
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


def test_a_training_pool_evaluation_holds_every_evaluated_step_and_its_own_problems(tmp_path):
    """rl.train_pool: a cell's train_pool rows (other problems than the held-out ones) are checked like its eval_tau
    rows, and only where the cell has them (a cell without a pool lacks nothing)."""
    expect = {"step": tables.expected_eval_steps(5, 2, own_sampler=True), "problem_id": None}
    pool = [("train_pool", step) for step in (0, 2, 4, 5)]
    path = tmp_path / "eval_problems.csv"
    problems = {"all": "abc", **{evaluation: "xy" for evaluation in pool}}
    EVAL_PROBLEMS.write(eval_problems_table(EVALUATIONS + pool, problems), path)
    assert len(EVAL_PROBLEMS.read(path, expect)) == 15 + 8
    EVAL_PROBLEMS.write(eval_problems_table(EVALUATIONS + pool[:2] + pool[3:], problems), path)
    with pytest.raises(tables.IncompleteTableError, match=r"evaluated_with=train_pool has no row for step 4"):
        EVAL_PROBLEMS.read(path, expect)
    EVAL_PROBLEMS.write(eval_problems_table(EVALUATIONS + pool, {**problems, ("train_pool", 2): "x"}), path)
    with pytest.raises(tables.IncompleteTableError, match=r"evaluated_with=train_pool, step=2 has no row for "
                                                          r"problem_id 'y'"):
        EVAL_PROBLEMS.read(path, expect)


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
                             r"the other rows of the same policy/evaluated_with: 3 values, found 2\)"):
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
