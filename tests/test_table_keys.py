"""Keys and finite columns of the results contract (ead.tables): a duplicated row or a NaN / inf metric
in any table is refused by every reader with one message naming the file, the column or key, and the rows.

Each case is reproduced as a user would meet it: a small grid written by the tables' own writers,
then one file edited by hand (a row appended, a value set to nan), as a copied or hand-edited table can be damaged."""

import math
import re

import numpy as np
import pandas as pd
import pytest

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
from tests.test_tables import CELL, EVALUATIONS, eval_problems_table, steps_table

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
