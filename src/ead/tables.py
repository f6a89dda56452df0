"""The results contract: every result table, declared once, and the pure per-problem -> metric functions that turn
per-problem counts into Pass@k / Worst@k.

Both RL backends (:mod:`ead.rl.train` on CPU, :mod:`ead.rl.verl.convert` for verl runs), the evaluation job
(:mod:`ead.evaluation`), the aggregation (:mod:`ead.rl.aggregate`), the analyses (:mod:`ead.analyses`) and the
figures (:mod:`ead.plots`) depend on this module and never on each other. It imports pandas, numpy and
:mod:`ead.metrics` only (no torch, no transformers), so converting a GPU run's logs loads no model code.

A :class:`Table` names the columns a table must have and the kind of each (``int``: whole numbers, no missing
value; ``float``: any real number, NaN allowed; ``str``; ``id``: str or int; ``array``: a sequence of real numbers
per row, a Parquet list column); a table may carry more columns (a
backend's own metrics, settings of the job that wrote it). Writers call :meth:`Table.write` and readers
:meth:`Table.read`: both validate, and a broken table fails with the file name and the column. The tables:

* :data:`STEPS` (``steps.csv`` of an RL cell): one row per training step, every :data:`TRAIN_METRICS` column;
* :data:`EVAL_PROBLEMS` (``eval_problems.csv``): per (step, sampler of the evaluation, problem) the sample and
  correct counts and ``greedy_correct`` (NaN where not graded: the verl backend, and the own-sampler rows);
* :data:`EVAL` (``eval.csv``): per (step, sampler of the evaluation, metric) the mean over problems with a 95%
  bootstrap CI;
* :data:`TRAIN_CURVES`, :data:`EVAL_CURVES` (``results/rl/{train,eval}_curves.csv``): the grid over seeds;
* :data:`BASE_PROBLEMS`, :data:`BASE_SUMMARY` (``results/eval/*``, ``results/rl/base/*``): the evaluation job's
  per-problem and summary tables;
* :data:`SCHEDULE_TABLE`, :data:`ENTROPY_BY_POSITION` (and :data:`ENTROPY_BY_ROLE` for the tiny policies),
  :data:`FORKING`, :data:`MAJORITY_SCALING`: the tables of Figs. 3, 1, 2 and 9 (``results/schedule/``,
  ``results/analyses/<analysis>/<model>.csv``);
* :data:`ENTROPY_SAMPLES`, :data:`FORKING_SAMPLES`, :data:`MAJORITY_SAMPLES`: what the sampling analyses sampled
  and graded (``results/analyses/<analysis>/<model>_samples.parquet``), from which their summary tables are made;
* :data:`PREMISES`, :data:`PREMISE_VERDICTS`: the premise probe (``results/premises/<policy>{,_verdicts}.csv``);
* :data:`RL_LEARNS` (``results/premises/rl_learns.csv``): premise G4, "RL learns here", read from the RL grid;
* :data:`PAIRED_CURVES` (``results/rl/paired_curves.csv``): each sampler minus a baseline at every evaluated step;
* :data:`SAMPLER_SCHEDULES` (``results/rl/schedule_shapes.csv``): tau by position and step of RL samplers;
* :data:`INFERENCE_ONLY`, :data:`INFERENCE_ONLY_HEADLINE` (``results/inference_only/``): samplers without RL;
* :data:`MEASURED_SCHEDULE` (``results/schedule/measured_<policy>.csv``): c and d0 sized from measurement;
* :data:`CLAIMS` (``results/claims.csv``): the paper's claims as paired comparisons with verdicts (the RL claims,
  and those of Figs. 1 and 2, first written to ``results/analyses/claims.csv`` by ``ead.analyses.claims``).

Every RL cell table carries :data:`CELL_COLUMNS` and the settings columns :data:`SETTINGS_COLUMNS`
(``ead.settings.cell.CellSettings.table_columns``).

Every table a workflow job writes also records the profile that made it (:data:`PROFILE_COLUMN`): the workflow
passes the profile's name to every job in ``EAD_PROFILE`` (``workflow/rules/common.smk``) and :meth:`Table.write`
stamps it; a table written outside the workflow (no ``EAD_PROFILE``) has no such column. Figures record it in their
metadata (:func:`ead.plots.style.save_figure`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Callable, Iterable, Mapping

import numpy as np
import pandas as pd
from pandas.api import types as ptypes

from ead.io import read_table, write_table
from ead.metrics import bootstrap_mean_ci, pass_at_k, verl_best_at_k, verl_worst_at_k, worst_at_k

__all__ = [
    "BASE_PROBLEMS", "BASE_SUMMARY", "CELL_COLUMNS", "CLAIMS", "CONFIG_COLUMNS", "COUNT_COLUMNS", "COUNT_METRIC",
    "ENTROPY_BY_POSITION", "ENTROPY_BY_ROLE", "ENTROPY_SAMPLES", "EVAL", "INFERENCE_ONLY",
    "INFERENCE_ONLY_HEADLINE", "EVALUATED_WITH", "EVAL_CURVES",
    "EVAL_PROBLEMS", "FORKING", "FORKING_SAMPLES", "GROUP", "KINDS", "DuplicateRowError", "Empty",
    "NonFiniteValueError",
    "MAJORITY_SAMPLES", "MAJORITY_SCALING", "MEASURED_SCHEDULE", "PAIRED_CURVES", "PREMISES", "PREMISE_VERDICTS",
    "PROBLEM_COLUMNS", "PROFILE_COLUMN", "RL_LEARNS", "SAMPLER_SCHEDULES", "PROFILE_ENV", "RUN_COLUMNS",
    "CONFIG_FILES_COLUMN",
    "CONFIG_FILES_ENV", "job_run_columns", "SCHEDULE_TABLE", "STATUS_COLUMN",
    "TIMEOUT_PROBLEM_COLUMN", "TIMEOUT_STEP_COLUMN",
    "ALL_TRAIN_METRICS", "LATER_TRAIN_METRICS", "SETTINGS_COLUMNS", "STEPS", "TABLES", "TRAIN_CURVES",
    "TRAIN_METRICS", "Table",
    "TableError", "Coverage", "IncompleteTableError",
    "evaluated_steps", "expected_eval_steps", "expected_steps", "job_profile", "per_problem_metric",
    "pass_worst_summary", "read_measured_schedule",
]

#: Column kinds and what they accept.
KINDS = ("int", "float", "str", "id", "array")
#: The column naming the profile (``profile:`` of the config) whose run wrote a table; a str where present.
PROFILE_COLUMN = "profile"
#: The environment variable through which the workflow tells every job its profile.
PROFILE_ENV = "EAD_PROFILE"
#: The column naming the config files layered over configs/config.yaml (profile, overlays, their includes; "" for the
#: default profile alone) whose run wrote a table, so a table tells which overlay produced it; with its variable.
CONFIG_FILES_COLUMN = "config_files"
CONFIG_FILES_ENV = "EAD_CONFIG_FILES"
#: Columns a workflow job stamps into every table it writes (str), declared by no table.
RUN_COLUMNS = (PROFILE_COLUMN, CONFIG_FILES_COLUMN)


def job_profile() -> str | None:
    """The profile of the workflow run this job belongs to (``EAD_PROFILE``), or None outside the workflow."""
    return os.environ.get(PROFILE_ENV) or None


def job_run_columns() -> dict:
    """The run's columns of a table this job writes: its profile and config files (empty outside the workflow)."""
    if job_profile() is None:
        return {}
    return {PROFILE_COLUMN: job_profile(), CONFIG_FILES_COLUMN: os.environ.get(CONFIG_FILES_ENV, "")}


class TableError(ValueError):
    """A result table breaks its declaration; the message names the file (or table) and the column."""


class DuplicateRowError(TableError):
    """Two rows of a result table share its key (:attr:`Table.keys`); the message names the file(s), the key and the
    rows."""


class NonFiniteValueError(TableError):
    """A column that must hold a finite number (:attr:`Table.finite`) holds NaN or +-inf; the message names the file,
    the column and the first such rows."""


class OutOfRangeError(TableError):
    """A column holds a value outside its declared bounds (:attr:`Table.bounds`, e.g. a correct count above the
    number of samples); the message names the file, the column, the bound and the first such rows."""


@dataclass(frozen=True)
class Bound:
    """The values of ``column`` lie between ``low`` and ``high``, inclusive: each a number, another column of the same
    row (``high="num_samples"``), or None (no bound). Readers turn these columns into estimates (Pass@k needs
    0 <= num_correct <= num_samples), so a value outside is refused where the table is read, naming its file and
    line, not deep inside an estimator."""

    column: str
    low: float | str | None = None
    high: float | str | None = None

    def text(self) -> str:
        if self.low is not None and self.high is not None:
            return f"between {self.low} and {self.high}"
        return f">= {self.low}" if self.low is not None else f"<= {self.high}"


class IncompleteTableError(TableError):
    """A result table lacks rows its declaration says it must hold (a step, an evaluation, a problem); the message
    names the file, the group (e.g. the cell) and what is missing."""


@dataclass(frozen=True)
class Coverage:
    """What a table must hold: within each group of rows sharing the ``within`` columns, ``column`` takes every expected
    value. The expected values are given to :meth:`Table.read` / :meth:`Table.read_all` (e.g. the steps 1..rl.steps),
    or else they are every value ``column`` takes among the rows sharing the ``reference`` columns (e.g. every problem
    some evaluation of the policy holds), so a cut table is caught even without the config."""

    column: str
    within: tuple[str, ...]
    reference: tuple[str, ...] = ()


@dataclass(frozen=True)
class Empty:
    """Where a :attr:`Table.finite` column may be left empty (NaN, never +-inf), and why (``reason``). With
    ``rows=False`` only a whole file's column may be empty (a backend that does not record the metric): a file that
    records it in some rows must record it in every row. With ``rows=True`` any row may (e.g. ``greedy_correct`` of the
    own-sampler evaluations, which have no greedy answer)."""

    reason: str
    rows: bool = False


#: Where an expected value is a function: it gets the group's {column: value} (e.g. {"evaluated_with": "own_sampler",
#: ...}) and returns the values that group must hold.
Expected = Iterable | Callable[[dict], Iterable] | None
#: The column :meth:`Table.read_all` adds while checking, so a missing row is reported with its file.
_SOURCE = "__source_file__"


def _compact(values) -> str:
    """[1, 2, 3, 5] -> '1-3, 5' for integers; else the sorted values, the first 10."""
    values = sorted(values, key=lambda v: (str(type(v)), v))
    if values and all(isinstance(v, (int, np.integer)) for v in values):
        runs, start = [], values[0]
        for previous, current in zip(values, values[1:] + [None]):
            if current is None or current != previous + 1:
                runs.append(f"{start}" if start == previous else f"{start}-{previous}")
                start = current
        return ", ".join(runs)
    shown = ", ".join(map(repr, values[:10]))
    return shown + (f", ... ({len(values)} in all)" if len(values) > 10 else "")


@dataclass(frozen=True)
class Table:
    """One result table's declaration: required columns and their kinds (extra columns are allowed), and
    ``optional`` columns: checked for their kind where present, added empty on read where absent (a column added
    after results were written, so tables of earlier runs stay readable).

    ``keys``: the columns that identify a row (no two rows share their values); ``finite``: the columns that must hold
    a finite number in every row (no NaN, no +-inf), except where ``empty`` says a value may be missing and why."""

    name: str
    columns: Mapping[str, str]
    optional: Mapping[str, str] = field(default_factory=dict)
    coverage: tuple[Coverage, ...] = ()
    keys: tuple[str, ...] = ()
    finite: tuple[str, ...] = ()
    empty: Mapping[str, Empty] = field(default_factory=dict)
    bounds: tuple[Bound, ...] = ()

    def __post_init__(self):
        declared = {**self.columns, **self.optional}
        bounded = [name for bound in self.bounds for name in (bound.column, bound.low, bound.high)
                   if isinstance(name, str) and declared.get(name) not in ("int", "float")]
        if bounded:
            raise ValueError(f"table {self.name}: bounds name column(s) {bounded} that are not numeric columns")
        unknown = {column: kind for column, kind in declared.items() if kind not in KINDS}
        if unknown:
            raise ValueError(f"table {self.name}: unknown column kinds {unknown}; known kinds: {list(KINDS)}")
        undeclared = [column for column in (*self.keys, *self.finite) if column not in declared]
        if undeclared:
            raise ValueError(f"table {self.name}: key or finite column(s) {undeclared} are not declared columns")
        numeric = [column for column in self.finite if declared[column] not in ("int", "float")]
        if numeric:
            raise ValueError(f"table {self.name}: finite column(s) {numeric} are not numeric")
        stray = sorted(set(self.empty) - set(self.finite))
        if stray:
            raise ValueError(f"table {self.name}: empty values declared for {stray}, which are not finite columns")
        whole = sorted(column for column in self.empty if declared[column] == "int")
        if whole:  # an int column holds a value in every row, and for a finite one the finite check enforces it
            raise ValueError(f"table {self.name}: empty values declared for int column(s) {whole}, which hold a "
                             "value in every row")
        object.__setattr__(self, "columns", MappingProxyType(dict(self.columns)))
        object.__setattr__(self, "optional", MappingProxyType(dict(self.optional)))
        object.__setattr__(self, "empty", MappingProxyType(dict(self.empty)))

    def validate(self, table: pd.DataFrame, source: str | Path | None = None) -> pd.DataFrame:
        """Return ``table`` if it has every declared column with a value of the declared kind, else raise
        :class:`TableError` naming ``source`` (the file; default: the table's name) and the broken column."""
        where = f"{source} ({self.name} table)" if source is not None else f"{self.name} table"
        missing = [column for column in self.columns if column not in table.columns]
        if missing:
            raise TableError(f"{where}: missing column(s) {missing}; the {self.name} table needs {list(self.columns)}")
        declared = {**self.columns, **{column: kind for column, kind in self.optional.items() if column in table}}
        for column in RUN_COLUMNS:
            if column in table.columns:
                declared.setdefault(column, "str")
        for column, kind in declared.items():
            problem = _kind_problem(table[column], kind)
            if problem:
                raise TableError(f"{where}: column {column!r} must be {kind}, {problem}")
        self._check_finite(table, where, source)
        self._check_int_values_present(table, declared, where, source)
        self._check_bounds(table, where, source)
        self._check_keys(table, where, source)
        return table

    def _row_text(self, table: pd.DataFrame, positions, source) -> str:
        """'line 5 (step=2), line 7 (step=2)': the rows at ``positions`` by their line of a CSV file (the header is
        line 1), else their row number from 1, each with its key; the first three, and how many more."""
        unit, offset = ("line", 2) if source is not None and Path(source).suffix == ".csv" else ("row", 1)
        shown = []
        for position in positions[:3]:
            row = table.iloc[position]
            key = ", ".join(f"{column}={_plain(row[column])}" for column in self.keys if column in table.columns)
            shown.append(f"{unit} {position + offset}" + (f" ({key})" if key else ""))
        more = len(positions) - len(shown)
        return ", ".join(shown) + (f" and {more} more" if more > 0 else "")

    def _check_bounds(self, table: pd.DataFrame, where: str, source) -> None:
        """Raise :class:`OutOfRangeError` for the first :attr:`bounds` a column's values break (empty values are the
        finite check's)."""
        for bound in self.bounds:
            if bound.column not in table.columns or table.empty:
                continue
            values = pd.to_numeric(table[bound.column], errors="coerce").to_numpy(dtype=float)
            limits = {side: (pd.to_numeric(table[limit], errors="coerce").to_numpy(dtype=float)
                             if isinstance(limit, str) else limit)
                      for side, limit in (("low", bound.low), ("high", bound.high)) if limit is not None}
            with np.errstate(invalid="ignore"):
                outside = np.zeros(len(values), dtype=bool)
                if "low" in limits:
                    outside |= values < limits["low"]
                if "high" in limits:
                    outside |= values > limits["high"]
            bad = np.flatnonzero(outside)
            if bad.size:
                first = bad[0]
                shown = _plain_number(values[first]) + "".join(
                    f" ({limit}={_plain_number(table[limit].iloc[first])})"
                    for limit in (bound.low, bound.high) if isinstance(limit, str))
                raise OutOfRangeError(
                    f"{where}: column {bound.column!r} must be {bound.text()}, got {shown} at "
                    f"{self._row_text(table, bad, source)}; the file was edited or its job wrote a wrong value: delete "
                    "it and rerun snakemake to rebuild it (if it fails again, see that job's log)")

    def _check_finite(self, table: pd.DataFrame, where: str, source) -> None:
        """Raise :class:`NonFiniteValueError` for the first :attr:`finite` column holding NaN or +-inf where no
        :class:`Empty` declaration allows an empty value."""
        for column in self.finite:
            if column not in table.columns or table.empty:
                continue
            values = pd.to_numeric(table[column], errors="coerce").to_numpy(dtype=float)
            missing, infinite = np.isnan(values), np.isinf(values)
            allowed = self.empty.get(column)
            if allowed is not None and (allowed.rows or missing.all()):
                missing = np.zeros_like(missing)
            bad = np.flatnonzero(missing | infinite)
            if bad.size:
                shown = ", ".join(dict.fromkeys(repr(float(values[position])) for position in bad[:3]))
                rule = ("" if allowed is None else f" or empty {allowed.reason}" if allowed.rows else
                        f" (it may be empty only in a whole file, {allowed.reason})")
                raise NonFiniteValueError(
                    f"{where}: column {column!r} must be a finite number{rule}, got {shown} at "
                    f"{self._row_text(table, bad, source)}; the file was edited or its job wrote a non-number: delete "
                    "it and rerun snakemake to rebuild it (if it fails again, see that job's log)")

    def _check_int_values_present(self, table: pd.DataFrame, declared: Mapping[str, str], where: str,
                                  source) -> None:
        """Raise :class:`TableError` naming the rows of the first int column left empty somewhere. An empty value
        makes the column float64, so the kind check alone would see a float column and show a valid value; the
        :attr:`finite` int columns are covered by :meth:`_check_finite`, which runs first."""
        for column, kind in declared.items():
            if kind != "int" or column in self.finite:
                continue
            empty = np.flatnonzero(table[column].isna().to_numpy())
            if empty.size:
                raise TableError(
                    f"{where}: column {column!r} must be int, got an empty value at "
                    f"{self._row_text(table, empty, source)}; the file was edited or its job wrote no value: delete "
                    "it and rerun snakemake to rebuild it (if it fails again, see that job's log)")

    def _check_keys(self, table: pd.DataFrame, where: str, source) -> None:
        """Raise :class:`DuplicateRowError` if two rows share the :attr:`keys` (the first such key, all its rows)."""
        keys = [column for column in self.keys if column in table.columns]
        if not keys or table.empty:
            return
        repeated = table.duplicated(keys, keep=False).to_numpy()
        if repeated.any():
            first = table.iloc[int(np.flatnonzero(repeated)[0])][keys]
            same = np.flatnonzero((table[keys] == first).all(axis=1).to_numpy() & repeated)
            raise DuplicateRowError(
                f"{where}: duplicated row: {len(same)} rows share the key ({', '.join(keys)}) at "
                f"{self._row_text(table, same, source)}; each key identifies one row: the file was edited or "
                "written twice: delete it and rerun snakemake to rebuild it")

    def write(self, table: pd.DataFrame, path: str | Path) -> None:
        """Stamp the job's run columns (:func:`job_run_columns`: profile and config files, inside the workflow),
        validate, then write atomically (CSV or Parquet by suffix, :func:`ead.io.write_table`)."""
        table = table.assign(**job_run_columns())
        write_table(self.validate(table, path), path)

    def read(self, path: str | Path, expect: Mapping[str, Expected] | None = None) -> pd.DataFrame:
        """Read (:func:`ead.io.read_table`), add absent optional columns (empty), and validate; with ``expect``
        ({coverage column: expected values, or None}, see :class:`Coverage`) also check completeness."""
        if expect is not None:
            return self.read_all([path], expect)
        table = read_table(path)
        missing = {column: None for column in self.optional if column not in table.columns}
        return self.validate(table.assign(**missing) if missing else table, path)

    def read_all(self, paths: Iterable[str | Path], expect: Mapping[str, Expected] | None = None) -> pd.DataFrame:
        """Read and validate every file, concatenated; then check the completeness rules named in ``expect`` (every
        coverage rule if ``expect`` is None: each against the values of its reference rows). A missing row raises
        :class:`IncompleteTableError` naming its file and what is missing."""
        parts = [self.read(path).assign(**{_SOURCE: str(path)}) for path in paths]
        table = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=[*self.columns, _SOURCE])
        self.check_unique_across(table)
        self.check_complete(table, {rule.column: None for rule in self.coverage} if expect is None else expect)
        return table.drop(columns=_SOURCE)

    def check_unique_across(self, table: pd.DataFrame) -> None:
        """Raise :class:`DuplicateRowError` if rows of two files (the concatenation of :meth:`read_all`, each file
        already checked alone) share a key, naming both files (e.g. a cell's directory copied to another seed)."""
        keys = [column for column in self.keys if column in table.columns]
        if not keys or table.empty:
            return
        repeated = table.duplicated(keys, keep=False).to_numpy()
        if repeated.any():
            first = table.iloc[int(np.flatnonzero(repeated)[0])]
            same = table.loc[(table[keys] == first[keys]).all(axis=1)]
            files = " and ".join(dict.fromkeys(same[_SOURCE]))
            key = ", ".join(f"{column}={_plain(first[column])}" for column in keys)
            raise DuplicateRowError(
                f"{files} ({self.name} table): duplicated row: both files hold the key ({key}); each key identifies "
                "one row: one of them was copied or written with the wrong settings: delete it and rerun snakemake")

    def check_complete(self, table: pd.DataFrame, expect: Mapping[str, Expected],
                       source: str | Path | None = None) -> pd.DataFrame:
        """Raise :class:`IncompleteTableError` if a group of rows lacks an expected value of a coverage column (see
        :class:`Coverage`); ``source`` names the file (else the rows' file from :meth:`read_all`, else the table)."""
        rules = {rule.column: rule for rule in self.coverage}
        unknown = sorted(set(expect) - set(rules))
        if unknown:
            raise ValueError(f"table {self.name}: no completeness rule for {unknown}; rules: {sorted(rules)}")
        if table.empty:
            return table
        for column, expected in expect.items():
            rule = rules[column]
            reference = None
            if expected is None:
                keys = list(rule.reference)
                reference = ({(): set(table[column])} if not keys else
                             {(key if isinstance(key, tuple) else (key,)): set(group[column])
                              for key, group in table.groupby(keys, sort=False)})
            groups = {(key if isinstance(key, tuple) else (key,)): group
                      for key, group in table.groupby(list(rule.within), sort=True)}
            for column_values in getattr(expected, "every_group", {}).items():  # groups that must exist, rows or not
                position = rule.within.index(column_values[0])
                for key, group in list(groups.items()):
                    for value in column_values[1]:
                        groups.setdefault(key[:position] + (value,) + key[position + 1:], group.iloc[:0])
            for key, group in groups.items():
                values = dict(zip(rule.within, key))
                if reference is not None:
                    wanted = reference[tuple(values[k] for k in rule.reference)]
                elif callable(expected):
                    wanted = set(expected(values))
                else:
                    wanted = set(expected)
                missing = wanted - set(group[column])
                if missing:
                    if group.empty:  # a group that must exist and has no row: its file is that of its siblings
                        shared = {c: v for c, v in values.items() if c not in getattr(expected, "every_group", {})}
                        group = table.loc[(table[list(shared)] == pd.Series(shared)).all(axis=1)]
                    where = source or (group[_SOURCE].iloc[0] if _SOURCE in group else f"{self.name} table")
                    group_text = ", ".join(f"{k}={v}" for k, v in values.items())
                    origin = ("the config" if reference is None else
                              "the other rows" + (f" of the same {'/'.join(rule.reference)}" if rule.reference else ""))
                    raise IncompleteTableError(
                        f"{where} ({self.name} table): incomplete: {group_text} has no row for {column} "
                        f"{_compact(missing)} (expected from {origin}: {len(wanted)} values, found "
                        f"{len(wanted) - len(missing)}); the job that wrote it was cut short or the file was edited: "
                        "delete the file and rerun snakemake to rebuild it")
        return table


def _plain_number(value) -> str:
    """A number as a file shows it: 9 for 9.0, 2.5 for 2.5."""
    value = float(value)
    return str(int(value)) if value.is_integer() else repr(value)


def _plain(value):
    """A key value as written in a file (numpy scalars as plain Python values)."""
    return value.item() if isinstance(value, np.generic) else value


def _kind_problem(values: pd.Series, kind: str) -> str | None:
    """Why ``values`` are not of ``kind`` (None if they are), showing the first value that does not fit (else, where
    only the column's dtype is wrong, its first value). An empty column fits every kind but ``array``; empty values of
    an int column are left to :meth:`Table.validate`, which names their rows."""
    present = values.dropna()
    if present.empty:  # no rows, or a column with no value (e.g. greedy_correct of a verl cell)
        return None if kind != "array" or values.empty else "got only missing values"
    dtype = values.dtype
    numeric = ptypes.is_numeric_dtype(dtype) and not ptypes.is_bool_dtype(dtype)
    dtype_fits = True
    if kind == "float":
        dtype_fits = numeric or ptypes.is_object_dtype(dtype)
        fits = (np.ones(len(present), dtype=bool) if numeric else
                present.map(lambda v: isinstance(v, (int, float, np.number)) and not isinstance(v, bool)))
    elif kind == "int":  # whole numbers; a float column of whole numbers (counts summed from float scores) fits
        if numeric:
            fits = present == np.round(present)
        else:  # refused for its dtype (e.g. a CSV column read as text); "2.5" or "many" is a better example than "3"
            dtype_fits = False
            numbers = pd.to_numeric(present.astype(str), errors="coerce")
            fits = numbers == np.round(numbers)
    elif kind == "str":
        fits = present.map(lambda v: isinstance(v, str))
    elif kind == "array":  # per row a list of real numbers (e.g. per-token entropies), possibly empty
        fits = present.map(lambda v: isinstance(v, (list, tuple, np.ndarray)) and (
            len(v) == 0 or (ptypes.is_numeric_dtype(np.asarray(v).dtype)
                            and not ptypes.is_bool_dtype(np.asarray(v).dtype))))
    else:  # id
        fits = present.map(lambda v: isinstance(v, (str, int, np.integer)) and not isinstance(v, bool))
    misfits = np.flatnonzero(~np.asarray(fits, dtype=bool))
    if dtype_fits and not misfits.size:
        return None
    example = present.iloc[int(misfits[0]) if misfits.size else 0]
    return f"got dtype {dtype} (e.g. {_plain(example)!r})"


# --- the columns --------------------------------------------------------------------------------------------

#: The cell every RL table row belongs to.
CELL_COLUMNS = ("policy", "algorithm", "sampler", "n", "seed")
_CELL_KINDS = {"policy": "str", "algorithm": "str", "sampler": "str", "n": "int", "seed": "int"}
#: Settings columns of every RL cell table (``ead.settings.cell.CellSettings.table_columns``), in that order.
SETTINGS_COLUMNS = {"lr": "float", "tis": "str", "tis_cap": "float", "loss_mode": "str", "schedule_params": "str",
                    "fixed_tau_trains_at": "str", "eval_tau": "float", "prompts_per_step": "int",
                    "mini_batches": "int"}
#: Settings columns the aggregation carries into the curves.
CONFIG_COLUMNS = ["lr", "tis", "tis_cap", "loss_mode", "schedule_params", "fixed_tau_trains_at", "eval_tau"]
#: A curve is one (policy, algorithm, sampler, n) over seeds.
GROUP = ["policy", "algorithm", "sampler", "n"]
#: Per-step training metrics of steps.csv that the aggregation turns into curves (both backends write every one;
#: NaN where a backend has no source).
TRAIN_METRICS = ["reward_mean", "entropy", "response_length", "pg_clipfrac", "ppo_kl", "grad_norm", "grad_norm_max",
                 "tis_weight_mean", "tis_weight_max", "tis_capped_fraction", "behaviour_target_log_ratio",
                 "rollout_s", "grade_s", "update_s", "wall_time_s"]
#: How a cell's evaluation rows were sampled: at the declared evaluation temperature (``rl.eval.tau``, the same for
#: every cell: what the figures and most claims compare) or with the cell's own sampler at that step (its EAD
#: schedule, or its fixed tau; the CPU backend, at the last step only).
EVALUATED_WITH = ("eval_tau", "own_sampler")
#: A per-problem evaluation's counts (the evaluation job's table, ``BASE_PROBLEMS``), in order.
COUNT_COLUMNS = ("problem_id", "num_samples", "num_correct", "greedy_correct")
#: A problem's counts: at least one sample, at most that many correct, a greedy answer right or wrong.
COUNT_BOUNDS = (Bound("num_samples", low=1), Bound("num_correct", low=0, high="num_samples"),
                Bound("greedy_correct", low=0, high=1))
#: eval_problems.csv's own columns, in order: the step and sampler of the evaluation, then its counts.
PROBLEM_COLUMNS = ("step", "evaluated_with", *COUNT_COLUMNS)
_PROBLEM_KINDS = {"step": "int", "evaluated_with": "str", "problem_id": "id", "num_samples": "int",
                  "num_correct": "int", "greedy_correct": "float"}
_ESTIMATE = {"metric": "str", "value": "float", "ci_low": "float", "ci_high": "float"}
_CELL_TABLE = {**_CELL_KINDS, **SETTINGS_COLUMNS}

#: Training metrics added after tables were first written, so optional in :data:`STEPS` (empty in older tables):
#: ``loss_token_fraction`` (CPU backend: the share of response tokens the loss kept), ``tis_ess_fraction`` (verl's
#: ``rollout_is_eff_sample_size`` of the step's truncated TIS weights, both backends) and ``sequence_ess_fraction``
#: (CPU backend: per rollout group, the ESS of the sequence weights pi_train / pi_behaviour as a share of n, averaged
#: over groups; what the premise probe reports before RL), ``tis_capped_sequence_fraction`` (the share of the step's
#: sequences whose importance weight exp(sum of log pi_train - log pi_behaviour) exceeds ``tis_cap``, the revised
#: paper's "fewer than 1% of sequences hit the truncation threshold"; CPU backend at every TIS level, verl backend from
#: ``rollout_corr/rollout_is_ratio_fraction_high`` in cells with sequence-level TIS and empty in the others, where
#: verl 0.9.1 computes no sequence weight: ead.rl.verl.convert).
LATER_TRAIN_METRICS = ["loss_token_fraction", "tis_ess_fraction", "sequence_ess_fraction",
                       "tis_capped_sequence_fraction"]
#: Every per-step training metric of steps.csv (a claim on one of these compares or thresholds per-seed step means).
ALL_TRAIN_METRICS = TRAIN_METRICS + LATER_TRAIN_METRICS
#: The grader's timeouts (``Grade.status == "timeout"``: an answer that used up its CPU budget twice and scored 0) as
#: counts: per step of an RL cell (``grader_timeouts``, its rollouts), per problem of an evaluation (``num_timeouts``,
#: its samples and greedy answer), per evaluation job (``grader_timeouts``); and per graded sample its status
#: (``grade_status``). Optional (NaN / empty in tables written before they existed, and where a backend does not
#: record them: verl's training steps); kind float so that such tables still read.
TIMEOUT_STEP_COLUMN = "grader_timeouts"
TIMEOUT_PROBLEM_COLUMN = "num_timeouts"
STATUS_COLUMN = "grade_status"
#: Completeness (:class:`Coverage`): a cell's steps.csv holds every step 1..rl.steps (:func:`expected_steps`); its
#: eval_problems.csv holds every evaluation step of each evaluation kind (:func:`expected_eval_steps`) and, in every
#: evaluation, every problem that an evaluation of the same policy holds (the evaluation set).
#: Keys and finite columns (:attr:`Table.keys`, :attr:`Table.finite`): a cell's steps.csv has one row per step, and
#: every training metric is a finite number, except those a backend does not record, empty in the whole file
#: (:class:`Empty`); its eval_problems.csv one row per (step, evaluated_with, problem) with finite counts.
_NOT_RECORDED = Empty("where the backend does not record it (verl: grad_norm_max, "
                      "behaviour_target_log_ratio, loss_token_fraction, sequence_ess_fraction, grader_timeouts; TIS "
                      "statistics of a run without TIS) or the table predates the column")
_ALWAYS_RECORDED = ("reward_mean", "entropy", "response_length")
STEPS = Table("steps", {"step": "int", **{metric: "float" for metric in TRAIN_METRICS}, **_CELL_TABLE},
              optional={**{metric: "float" for metric in LATER_TRAIN_METRICS}, TIMEOUT_STEP_COLUMN: "float"},
              coverage=(Coverage("step", CELL_COLUMNS),),
              keys=(*CELL_COLUMNS, "step"),
              finite=("step", *TRAIN_METRICS, *LATER_TRAIN_METRICS, TIMEOUT_STEP_COLUMN),
              empty={metric: _NOT_RECORDED for metric in (*TRAIN_METRICS, *LATER_TRAIN_METRICS, TIMEOUT_STEP_COLUMN)
                     if metric not in _ALWAYS_RECORDED})
_NOT_GRADED = Empty("in the rows of an evaluation without a greedy answer (own-sampler rows; every row of a verl "
                    "cell, which validates with one sampling setting)", rows=True)
EVAL_PROBLEMS = Table("eval_problems", {**_PROBLEM_KINDS, **_CELL_TABLE}, optional={TIMEOUT_PROBLEM_COLUMN: "float"},
                      coverage=(Coverage("step", (*CELL_COLUMNS, "evaluated_with"), ("evaluated_with",)),
                                Coverage("problem_id", (*CELL_COLUMNS, "evaluated_with", "step"), ("policy",))),
                      keys=(*CELL_COLUMNS, "step", "evaluated_with", "problem_id"),
                      finite=("step", "num_samples", "num_correct", "greedy_correct", TIMEOUT_PROBLEM_COLUMN),
                      empty={"greedy_correct": _NOT_GRADED, TIMEOUT_PROBLEM_COLUMN: _NOT_RECORDED},
                      bounds=COUNT_BOUNDS)


def expected_steps(steps: int) -> range:
    """The steps a cell's steps.csv must hold: 1..``steps`` (rl.steps)."""
    return range(1, steps + 1)


def evaluated_steps(steps: int, every: int) -> list[int]:
    """The RL steps at which a cell is evaluated at the declared temperature: 0 (the base evaluation), every
    ``every`` (rl.eval.every) and the last, ``steps`` (rl.steps). The CPU trainer evaluates at these, the completeness
    check expects them, and verl's ``trainer.test_freq = every`` with ``val_before_train`` validates at the same."""
    if every < 1:
        raise ValueError(f"rl.eval.every must be >= 1, got {every}")
    return sorted({0, *range(every, steps + 1, every), steps})


def expected_eval_steps(steps: int, every: int, own_sampler: bool) -> Callable[[dict], list[int]]:
    """The evaluation steps a cell's eval_problems.csv must hold, by evaluation kind: :func:`evaluated_steps` at the
    declared temperature; with the cell's own sampler the last step (if ``own_sampler``)."""
    declared = evaluated_steps(steps, every)

    def of_group(values: dict) -> list[int]:
        return declared if values["evaluated_with"] == "eval_tau" else ([steps] if own_sampler else [])

    of_group.every_group = {"evaluated_with": EVALUATED_WITH}  # a cell lacking a whole kind of evaluation is caught
    return of_group
_VERL_AGGREGATE = Empty("in rows from verl's own validation aggregates (steps without a dump: no CI, and no value "
                        "for a k verl did not report)", rows=True)
EVAL = Table("eval", {"step": "int", "evaluated_with": "str", **_ESTIMATE, **_CELL_TABLE},
             optional={TIMEOUT_STEP_COLUMN: "float"}, keys=(*CELL_COLUMNS, "step", "evaluated_with", "metric"),
             finite=("step", "value", "ci_low", "ci_high", TIMEOUT_STEP_COLUMN),
             empty={"value": _VERL_AGGREGATE, "ci_low": _VERL_AGGREGATE, "ci_high": _VERL_AGGREGATE,
                    TIMEOUT_STEP_COLUMN: _NOT_RECORDED})
_CURVE = {**{column: _CELL_KINDS[column] for column in GROUP}, "step": "int", **_ESTIMATE, "num_seeds": "int",
          **{column: SETTINGS_COLUMNS[column] for column in CONFIG_COLUMNS}}
_ESTIMATE_FINITE = ("step", "value", "ci_low", "ci_high")
TRAIN_CURVES = Table("train_curves", _CURVE, keys=(*GROUP, "metric", "step"),
                     finite=(*_ESTIMATE_FINITE, "num_seeds"))
EVAL_CURVES = Table("eval_curves", {**_CURVE, "evaluated_with": "str", "num_problems": "int"},
                    keys=(*GROUP, "evaluated_with", "metric", "step"),
                    finite=(*_ESTIMATE_FINITE, "num_seeds", "num_problems"))
BASE_PROBLEMS = Table("base_problems", {column: _PROBLEM_KINDS[column] for column in COUNT_COLUMNS},
                      optional={TIMEOUT_PROBLEM_COLUMN: "float"}, keys=("problem_id",),
                      finite=("num_samples", "num_correct", "greedy_correct", TIMEOUT_PROBLEM_COLUMN),
                      empty={"greedy_correct": _NOT_GRADED, TIMEOUT_PROBLEM_COLUMN: _NOT_RECORDED},
                      bounds=COUNT_BOUNDS)
BASE_SUMMARY = Table("base_summary", {**_ESTIMATE, "step": "int", "n": "int", "num_problems": "int", "split": "str",
                                      "schedule_params": "str", "mean_response_tokens": "float"},
                     optional={TIMEOUT_STEP_COLUMN: "float"}, keys=("metric",),
                     finite=(*_ESTIMATE_FINITE, "num_problems", TIMEOUT_STEP_COLUMN),
                     empty={TIMEOUT_STEP_COLUMN: _NOT_RECORDED})

_CI = {"ci_low": "float", "ci_high": "float"}
SCHEDULE_TABLE = Table("schedule_table", {"decay_d": "float", "effective_decay": "float", "position": "int",
                                          "tau": "float", "tau_max": "float", "tau_min": "float", "warmup": "int",
                                          "decay_scale": "float", "step": "int"},
                       keys=("decay_d", "step", "position"), finite=("tau", "position", "step"))
_ANALYSIS = {"model_name": "str", "engine": "str", "task": "str"}
ENTROPY_BY_POSITION = Table("entropy_by_position", {
    "position": "int", "mean_entropy": "float", **_CI, "num_questions": "int", "num_responses": "int",
    "fraction_alive": "float", **_ANALYSIS}, keys=(*_ANALYSIS, "position"),
    finite=("position", "mean_entropy", "num_questions", "num_responses", "fraction_alive"))
#: Fig. 1 by token role (countdown responses of the tiny policies, ``ead.analyses.entropy_by_position.token_roles``).
ENTROPY_BY_ROLE = Table("entropy_by_role", {"role": "str", "mean_entropy": "float", **_CI, "num_questions": "int",
                                            "num_tokens": "int", "responses_left_out": "int", **_ANALYSIS},
                        keys=(*_ANALYSIS, "role"), finite=("mean_entropy", "num_questions", "num_tokens"))
FORKING = Table("forking", {"metric": "str", "fork_point": "int", "k": "int", "value": "float", **_CI,
                            "num_units": "int", **_ANALYSIS},
                keys=(*_ANALYSIS, "metric", "fork_point", "k"), finite=("fork_point", "k", "value", "num_units"))
MAJORITY_SCALING = Table("majority_scaling", {
    "sampler": "str", "n": "int", "maj_at_n": "float", **_CI, "num_units": "int", "accuracy": "float",
    "no_answer_rate": "float", "mean_response_tokens": "float", "schedule_params": "str", **_ANALYSIS},
    keys=(*_ANALYSIS, "sampler", "n"), finite=("n", "maj_at_n", "num_units", "accuracy", "no_answer_rate"))
#: What the sampling analyses sampled, one row per response (graded ones with the grader's vote key, score and vote
#: group within their unit, ``ead.analyses.common.add_vote_groups``), plus the job's settings columns. Their summary
#: job (``ead.analyses.summary_tables``) reads these and writes the three tables above.
_GRADED = {"sample_id": "int", "num_tokens": "int", "predicted": "str", "correct": "float", "vote_group": "int"}
ENTROPY_SAMPLES = Table("entropy_by_position_samples", {
    "prompt_id": "id", "sample_id": "int", "num_tokens": "int", "mean_entropy": "float", "entropies": "array",
    **_ANALYSIS}, keys=(*_ANALYSIS, "prompt_id", "sample_id"), finite=("num_tokens",))
FORKING_SAMPLES = Table("forking_samples", {"question_id": "id", "unit": "str", "fork_point": "int", **_GRADED,
                                            **_ANALYSIS}, optional={STATUS_COLUMN: "str"},
                          keys=(*_ANALYSIS, "question_id", "unit", "fork_point", "sample_id"),
                          finite=("fork_point", "sample_id", "num_tokens"))
MAJORITY_SAMPLES = Table("majority_scaling_samples", {"sampler": "str", "schedule_params": "str", "prompt_id": "id",
                                                      **_GRADED, **_ANALYSIS}, optional={STATUS_COLUMN: "str"},
                           keys=(*_ANALYSIS, "sampler", "schedule_params", "prompt_id", "sample_id"),
                           finite=("sample_id", "num_tokens"))

#: The premise probe (``ead.analyses.premises``): per (sampler, step, metric) a value with its CI and, for mean-type
#: metrics, the paired difference to the baseline sampler with its CI and minimum detectable effect (NaN for
#: pooled ratios and greedy accuracy); and one row per premise part with its effect and verdict.
_PROBE = {"model": "str", "num_problems": "int", "n": "int", "baseline": "str", "seed": "int"}
PREMISES = Table("premises", {"sampler": "str", "step": "int", **_ESTIMATE, "diff": "float", "diff_ci_low": "float",
                              "diff_ci_high": "float", "mde": "float", **_PROBE},
                 keys=("model", "sampler", "step", "metric"), finite=("step", "value"))
PREMISE_VERDICTS = Table("premise_verdicts", {"premise": "str", "part": "str", "effect": "float", **_CI,
                                              "threshold": "float", "verdict": "str", "rule": "str", **_PROBE},
                         keys=("model", "premise", "part"))

#: The claims table (``ead.rl.compare``): one row per paper claim tested on the grid, a paired effect with its CI,
#: standard error, minimum detectable effect and verdict; ``baseline_algorithm`` (RL rows; empty for the analyses'
#: rows and in tables written before it existed) names the baseline cell's algorithm; ``threshold`` (threshold claims
#: on one cell, ``ead.rl.compare``: effect = the cell's metric minus it; empty in paired rows) the claimed bound;
#: ``best_of`` and ``selection`` (claims against the best of several candidate baselines, ``ead.rl.compare``; empty in
#: other rows) the candidates (space-separated) and the selection rule with each candidate's score on the selection
#: problems, the chosen one being ``baseline``;
#: ``over`` (evaluation rows of RL claims): ``last`` (the metric at the last evaluated step) or ``curve`` (its mean
#: over the evaluated steps after step 0, the area under the learning curve); ``rl_learns`` (RL rows): the verdict of
#: premise G4 (:data:`RL_LEARNS`) in the claim's (policy, algorithm, n), or ``untested`` where the grid has no G4
#: row for it. Both are empty in the analyses' rows and in tables written before they existed.
CLAIMS = Table("claims", {"claim": "str", "figure": "str", "statement": "str", "policy": "str", "algorithm": "str",
                          "n": "int", "sampler": "str", "baseline": "str",
                          "metric": "str", "evaluated_with": "str",
                          "step": "int",
                          "effect": "float", **_CI, "standard_error": "float", "mde": "float", "num_seeds": "int",
                          "num_units": "int", "verdict": "str", "rule": "str", "scope": "str"},
               optional={"baseline_algorithm": "str", "threshold": "float", "best_of": "str", "selection": "str",
                         "over": "str", "rl_learns": "str"},
               keys=("claim", "policy"),
               finite=("effect", "ci_low", "ci_high", "standard_error", "mde", "num_units"),
               empty={"mde": Empty("in a row of fewer than two units (no spread to size it from)", rows=True)})

#: Premise G4, "RL learns here" (``ead.rl.learns``, ``results/premises/rl_learns.csv``): per (policy, algorithm, n) of
#: the grid with cells of the G4 sampler (tau 1.0), the metric (Pass@1) at the last evaluated step minus step 0, paired
#: by seed and problem, with its two-way bootstrap CI, standard error and MDE, the thresholds it is read against
#: (``min_effect``: the mean; ``min_ci_low``: the CI's lower bound) and the verdict with its rule. A sibling of
#: :data:`PREMISE_VERDICTS` (same premise/part/effect/CI/verdict/rule columns), since G1-G3 are measured per policy
#: before RL and G4 on the RL grid.
RL_LEARNS = Table("rl_learns", {"premise": "str", "part": "str", "policy": "str", "algorithm": "str", "n": "int",
                                "sampler": "str", "metric": "str", "step": "int", "effect": "float", **_CI,
                                "standard_error": "float", "mde": "float", "min_effect": "float",
                                "min_ci_low": "float", "num_seeds": "int", "num_problems": "int", "verdict": "str",
                                "rule": "str"},
                  keys=("policy", "algorithm", "n", "premise"),
                  finite=("step", "effect", "ci_low", "ci_high", "min_effect", "min_ci_low", "num_seeds",
                          "num_problems"))

#: Paired-difference curves (``ead.rl.paired``): per (policy, algorithm, n, evaluated_with, sampler, baseline, step,
#: metric) the mean over (seed, problem) of sampler - baseline with its two-way bootstrap CI, standard error and
#: minimum detectable effect (80% power): a claims row's estimator at every evaluated step; the figures' paired panels.
PAIRED_CURVES = Table("paired_curves", {"policy": "str", "algorithm": "str", "n": "int", "evaluated_with": "str",
                                        "sampler": "str", "baseline": "str", "step": "int", "metric": "str",
                                        "effect": "float", **_CI, "standard_error": "float", "mde": "float",
                                        "num_seeds": "int", "num_problems": "int"},
                      keys=("policy", "algorithm", "n", "evaluated_with", "sampler", "baseline", "metric", "step"),
                      finite=("step", "effect", "ci_low", "ci_high", "standard_error", "mde", "num_seeds",
                              "num_problems"),
                      empty={column: Empty("where the bootstrap drew once (no spread: rl.paired --resamples 1)")
                             for column in ("standard_error", "mde")})

#: The temperature each RL sampler gives by (step, position) (``ead.analyses.sampler_schedules``), with its schedule
#: document: the top row of the schedule-shapes figure.
SAMPLER_SCHEDULES = Table("sampler_schedules", {"sampler": "str", "step": "int", "position": "int", "tau": "float",
                                                "schedule_params": "str"},
                          keys=("sampler", "step", "position"), finite=("step", "position", "tau"))

#: Inference-only sampler comparison (``ead.analyses.inference_only``): per (model, split, sampler, metric) the mean
#: over problems with its CI, and the paired difference to ``baseline`` with its CI, SE and MDE; and the headline:
#: per (model, metric) the best EAD minus the best fixed temperature on the report split, chosen on the selection split.
_PAIRED_DIFF = {"diff": "float", "diff_ci_low": "float", "diff_ci_high": "float", "standard_error": "float",
                "mde": "float", "num_problems": "int"}
INFERENCE_ONLY = Table("inference_only", {"model": "str", "split": "str", "sampler": "str", "family": "str",
                                          "metric": "str", "value": "float", **_CI, "baseline": "str", **_PAIRED_DIFF},
                       keys=("model", "split", "sampler", "metric"), finite=("value", "ci_low", "ci_high"))
INFERENCE_ONLY_HEADLINE = Table("inference_only_headline", {
    "model": "str", "metric": "str", "select_split": "str", "report_split": "str", "select_metric": "str",
    "ead_best": "str", "fixed_best": "str", "effect": "float", **_CI, "standard_error": "float", "mde": "float",
    "num_problems": "int", "verdict": "str", "rule": "str"}, keys=("model", "metric"),
    finite=("effect", "ci_low", "ci_high"))

#: The schedule sized from measurement (``ead.analyses.measured_schedule``): per (schedule: measured or hand_sized,
#: position) tau at step 0, each schedule's c (``warmup``) and d0, and the measurements and rule behind them.
MEASURED_SCHEDULE = Table("measured_schedule", {
    "schedule": "str", "policy": "str", "position": "int", "tau": "float", "warmup": "int", "d0": "float",
    "tau_max": "float", "tau_min": "float", "decay_scale": "float", "entropy_fraction": "float", "window": "int",
    "length_quantile": "float", "floor_fraction": "float", "rule": "str", "early_median_entropy": "float",
    "length_at_quantile": "float", "floor_position": "float", "num_responses": "int"},
    keys=("schedule", "policy", "position"), finite=("position", "tau", "warmup", "d0"))

#: Every declared table by name.
TABLES = {table.name: table for table in (STEPS, EVAL_PROBLEMS, EVAL, TRAIN_CURVES, EVAL_CURVES, BASE_PROBLEMS,
                                          BASE_SUMMARY, SCHEDULE_TABLE, ENTROPY_BY_POSITION, ENTROPY_BY_ROLE, FORKING,
                                          MAJORITY_SCALING, ENTROPY_SAMPLES, FORKING_SAMPLES, MAJORITY_SAMPLES,
                                          PREMISES, PREMISE_VERDICTS, RL_LEARNS, CLAIMS, PAIRED_CURVES,
                                          SAMPLER_SCHEDULES, INFERENCE_ONLY, INFERENCE_ONLY_HEADLINE,
                                          MEASURED_SCHEDULE)}


# --- per-problem counts -> metrics ------------------------------------------------------------------------

#: Evaluation metrics from per-problem counts: the unbiased estimators, and verl's bootstrap best@k / worst@k
#: (with replacement; ead.metrics) under their own names, so no table or figure mixes the two.
COUNT_METRIC = re.compile(r"(pass|worst|verl_best|verl_worst)@(\d+)")
_COUNT_ESTIMATORS = {"pass": pass_at_k, "worst": worst_at_k, "verl_best": verl_best_at_k,
                     "verl_worst": verl_worst_at_k}


def per_problem_metric(problems: pd.DataFrame, metric: str) -> np.ndarray:
    """Per-problem value of greedy_accuracy, pass@k, worst@k, verl_best@k or verl_worst@k."""
    if metric == "greedy_accuracy":
        return problems["greedy_correct"].to_numpy(dtype=float)
    match = COUNT_METRIC.fullmatch(metric)
    if not match:
        raise ValueError(f"unknown evaluation metric {metric!r}")
    estimator = _COUNT_ESTIMATORS[match[1]]
    return estimator(problems["num_samples"].to_numpy(), problems["num_correct"].to_numpy(), int(match[2]))


def pass_worst_summary(per_problem: pd.DataFrame, ks: list[int], *, seed: int) -> pd.DataFrame:
    """One row per metric (greedy_accuracy if graded, pass@k, worst@k): mean over problems and a 95% bootstrap CI.

    Greedy accuracy is reported when ``greedy_correct`` has values; a column of NaN (the verl backend, which
    validates with one sampling setting) means "not graded".
    """
    rows = []
    if "greedy_correct" in per_problem.columns and per_problem["greedy_correct"].notna().any():
        rows.append(("greedy_accuracy", per_problem["greedy_correct"].to_numpy(dtype=float)))
    counts = per_problem["num_samples"].to_numpy(), per_problem["num_correct"].to_numpy()
    for k in ks:
        rows.append((f"pass@{k}", pass_at_k(*counts, k)))
        rows.append((f"worst@{k}", worst_at_k(*counts, k)))
    return pd.DataFrame([
        dict(zip(("metric", "value", "ci_low", "ci_high"), (name, *bootstrap_mean_ci(values, seed=seed))))
        for name, values in rows
    ])


def read_measured_schedule(path: str) -> dict:
    """c and d0 of the measured schedule in its table (ead.analyses.measured_schedule writes it; an RL cell with
    ``measured: true`` reads it)."""
    table = MEASURED_SCHEDULE.read(path)
    rows = table[table["schedule"] == "measured"]
    if rows.empty:
        raise SystemExit(f"{path}: no row with schedule == 'measured'")
    first = rows.iloc[0]
    return {"warmup": int(first["warmup"]), "d0": float(first["d0"])}
