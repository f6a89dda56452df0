"""The table contract (ead.tables.schema): declarations validate on write and read; a duplicated row or a NaN / inf
metric in any table is refused by every reader with one message naming the file, the column or key, and the rows;
a table must hold every step and problem its coverage rules name."""

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
    DuplicateRowError,
    Empty,
    NonFiniteValueError,
    OutOfRangeError,
    Table,
    TableError,
)
from tests.tables.conftest import (
    EVALUATIONS,
    append_copy_of,
    at_step_2_problem_b,
    edit,
    eval_problems_table,
    problems_table,
    run_aggregate,
    run_cell_eval,
    run_claims,
    run_paired,
    steps_table,
)

ROOT = Path(__file__).resolve().parents[2]


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
    test_an_empty_value_in_an_int_column_that_is_not_finite_names_the_column_and_lines."""
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

def test_the_evaluated_steps_are_one_rule_for_the_trainer_and_the_completeness_check():
    from ead.tables import evaluated_steps, expected_eval_steps

    assert evaluated_steps(10, 4) == [0, 4, 8, 10] and evaluated_steps(8, 4) == [0, 4, 8]
    assert evaluated_steps(3, 8) == [0, 3]  # the last step is always evaluated
    with pytest.raises(ValueError, match=r"rl\.eval\.every must be >= 1, got 0"):
        evaluated_steps(4, 0)
    expected = expected_eval_steps(10, 4, own_sampler=True)
    assert expected({"evaluated_with": "eval_tau"}) == evaluated_steps(10, 4)
    assert expected({"evaluated_with": "own_sampler"}) == [10]


def test_a_text_read_as_missing_where_a_value_may_be_empty_is_refused_naming_file_column_and_line(tmp_path):
    """'nan' typed into a column the contract lets be empty (a premise's effect, a greedy answer not graded) reads as
    NaN like an empty field, so it would pass for 'no effect' or 'not graded'; no job writes it (pandas writes NaN as
    nothing), so it is refused as an edit."""
    from ead.tables import EVAL_PROBLEMS, PREMISE_VERDICTS
    from ead.tables.schema import NonFiniteValueError
    from tests.tables.test_declarations import valid_rows

    for table, column in ((PREMISE_VERDICTS, "effect"), (EVAL_PROBLEMS, "greedy_correct")):
        path = tmp_path / f"{table.name}.csv"
        table.write(valid_rows(table).assign(**{column: [0.5, None, 0.25]}), path)
        assert table.read(path)[column].isna().tolist() == [False, True, False]  # empty: allowed
        lines = path.read_text().splitlines()
        header = lines[0].split(",")
        fields = lines[3].split(",")
        fields[header.index(column)] = "nan"
        path.write_text("\n".join([*lines[:3], ",".join(fields), *lines[4:]]) + "\n")
        message = (rf"{table.name}\.csv \({table.name} table\): column '{column}' may be empty .* the text 'nan' at "
                   r"line 4")
        with pytest.raises(NonFiniteValueError, match=message):
            table.read(path)


def test_an_aggregate_cut_at_a_line_boundary_is_refused_naming_the_file_and_the_rows(tmp_path):
    """eval_curves.csv cut to its first lines parses row by row; the count its job wrote tells it is cut (the summary
    and the figures read it through the contract). A file without the count (written before it was) still reads."""
    from ead.tables import EVAL_CURVES
    from ead.tables.schema import EXTENT_COLUMN, IncompleteTableError
    from tests.tables.test_declarations import valid_rows

    path = tmp_path / "eval_curves.csv"
    EVAL_CURVES.write(valid_rows(EVAL_CURVES, 4), path)
    assert len(EVAL_CURVES.read(path)) == 4 and set(EVAL_CURVES.read(path)[EXTENT_COLUMN]) == {4}
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:3]))  # the header and 2 of the 4 rows
    with pytest.raises(IncompleteTableError, match=r"eval_curves\.csv \(eval_curves table\): holds 2 rows, but its job "
                                                   r"wrote 4 \(column 'table_rows'\); the file was cut short"):
        EVAL_CURVES.read(path)
    pd.read_csv(path).drop(columns=[EXTENT_COLUMN]).to_csv(path, index=False)
    assert len(EVAL_CURVES.read(path)) == 2
