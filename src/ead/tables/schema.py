"""A result table's declaration and the machinery that holds every table to it: reading, validating, writing.

A :class:`Table` names the columns a table must have and the kind of each (``int``: whole numbers, no missing
value; ``float``: any real number, NaN allowed; ``str``; ``id``: str or int; ``array``: a sequence of real numbers
per row, a Parquet list column); a table may carry more columns (a
backend's own metrics, settings of the job that wrote it). Writers call :meth:`Table.write` and readers
:meth:`Table.read`: both validate, and a broken table fails with the file name and the column. Beyond the kinds, a
declaration states the key of a row (:class:`DuplicateRowError`), the columns that must hold a finite number
(:class:`NonFiniteValueError`, with :class:`Empty` where a value may be missing), the bounds of a column
(:class:`Bound`, :class:`OutOfRangeError`) and the rows a table must hold (:class:`Coverage`,
:class:`IncompleteTableError`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Callable, Iterable, Mapping

import numpy as np
import pandas as pd
from pandas.api import types as ptypes

from ead.io import read_table, write_table
from ead.tables.provenance import RUN_COLUMNS, job_run_columns

__all__ = ["KINDS", "Bound", "Coverage", "DuplicateRowError", "Empty", "Expected", "IncompleteTableError",
           "NonFiniteValueError", "OutOfRangeError", "Table", "TableError"]

#: Column kinds and what they accept.
KINDS = ("int", "float", "str", "id", "array")


class TableError(ValueError):
    """A result table breaks its declaration; the message names the file (or table) and the column."""


class DuplicateRowError(TableError):
    """Two rows of a result table share its key (:attr:`Table.keys`); the message names the file(s), the key and the
    rows."""


#: Texts pandas reads as a missing value (its default NA strings but the empty one), lower-cased.
_MISSING_VALUE_TEXTS = {"nan", "-nan", "na", "n/a", "<na>", "#na", "#n/a", "#n/a n/a", "null", "none", "-1.#ind",
                        "1.#ind", "1.#qnan", "-1.#qnan"}


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
#: The rows a writer wrote, in every row of a table declared with ``extent`` (:attr:`Table.extent`).
EXTENT_COLUMN = "table_rows"


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
    #: The writer records how many rows it wrote (column :data:`EXTENT_COLUMN`) and a reader refuses a file holding
    #: fewer or more: a table cut at a line boundary (a copy or an edit) parses, and only its count tells. For the
    #: aggregates whose rows no other rule checks (a cell's tables are checked against the cell's budget instead).
    extent: bool = False

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
        table = table.assign(**job_run_columns(), **({EXTENT_COLUMN: len(table)} if self.extent else {}))
        write_table(self.validate(table, path), path)

    def read(self, path: str | Path, expect: Mapping[str, Expected] | None = None) -> pd.DataFrame:
        """Read (:func:`ead.io.read_table`), add absent optional columns (empty), and validate; with ``expect``
        ({coverage column: expected values, or None}, see :class:`Coverage`) also check completeness."""
        if expect is not None:
            return self.read_all([path], expect)
        table = read_table(path)
        missing = {column: None for column in self.optional if column not in table.columns}
        table = self.validate(table.assign(**missing) if missing else table, path)
        # the raw text is read again only where a column that may be empty holds a missing value somewhere
        if Path(path).suffix == ".csv" and any(table[column].isna().any() for column in self.empty if column in table):
            self._check_empty_is_empty(path)
        if self.extent and EXTENT_COLUMN in table.columns:  # absent in a file written before the column was
            self._check_extent(table, path)
        return table

    def _check_extent(self, table: pd.DataFrame, path: str | Path) -> None:
        """Raise :class:`IncompleteTableError` unless the file holds exactly the rows its writer recorded."""
        written = set(pd.to_numeric(table[EXTENT_COLUMN], errors="coerce").dropna().astype(int))
        if written != {len(table)}:
            recorded = ", ".join(map(str, sorted(written))) or "none"
            raise IncompleteTableError(
                f"{path} ({self.name} table): holds {len(table)} rows, but its job wrote {recorded} (column "
                f"{EXTENT_COLUMN!r}); the file was cut short, extended or edited since: delete it and rerun snakemake "
                "to rebuild it")

    def _check_empty_is_empty(self, path: str | Path) -> None:
        """Raise :class:`NonFiniteValueError` where a column that may be empty (:attr:`empty`) holds a text that reads
        as a missing value ('nan', 'NA', 'null', ...). pandas reads it as NaN, like an empty field, but no writer of
        ours leaves it (``to_csv`` writes NaN as nothing): it is an edit, and would pass for 'not recorded'."""
        raw = pd.read_csv(path, dtype=str, keep_default_na=False, usecols=lambda column: column in self.empty)
        for column in raw.columns:
            texts = raw[column].str.strip()
            bad = np.flatnonzero(texts.str.lower().isin(_MISSING_VALUE_TEXTS).to_numpy())
            if bad.size:
                raise NonFiniteValueError(
                    f"{path} ({self.name} table): column {column!r} may be empty {self.empty[column].reason}, but "
                    f"holds the text {texts.iloc[bad[0]]!r} at {self._row_text(raw, bad, path)}; a job leaves such a "
                    "value empty, so the file was edited: delete it and rerun snakemake to rebuild it")

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
