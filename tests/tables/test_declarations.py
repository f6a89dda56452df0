"""Every declared table (ead.tables.declarations): its keys and finite columns, each refused when duplicated or
non-finite by its reader, and the columns both backends and the grid write."""

import math
from pathlib import Path

import pandas as pd
import pytest

from ead import tables
from ead.tables import (
    STEPS,
    TABLES,
    DuplicateRowError,
    Empty,
    NonFiniteValueError,
    Table,
)

ROOT = Path(__file__).resolve().parents[2]


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

def test_declarations_are_well_formed():
    assert set(TABLES) == {"steps", "eval_problems", "eval_failures", "eval", "train_curves", "eval_curves",
                           "base_problems", "base_failures",
                           "base_summary", "schedule_table", "entropy_by_position", "entropy_by_role", "forking",
                           "majority_scaling",
                           "entropy_by_position_samples", "forking_samples", "majority_scaling_samples",
                           "premises", "premise_verdicts", "premises_by_group", "rl_learns", "premise_tradeoff",
                           "premise_tradeoff_rho", "claims", "paired_curves",
                           "sampler_schedules", "inference_only", "inference_only_headline", "measured_schedule",
                           "signal_by_phase", "eval_by_group", "fingerprint", "machine_spread"}
    with pytest.raises(ValueError, match="unknown column kinds"):
        Table("bad", {"x": "number"})
