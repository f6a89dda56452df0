"""Reading the RL grid's per-cell tables (ead.rl.cells): a cell cut short is refused where the cells are combined,
naming its file."""

import argparse

import pandas as pd
import pytest

from ead import tables
from ead.rl.cells import add_completeness_arguments, read_cells
from ead.tables import EVAL_PROBLEMS, STEPS
from tests.tables.conftest import EVALUATIONS, eval_problems_table, steps_table


def extent(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_completeness_arguments(parser)
    return parser.parse_args(list(argv))


def test_read_cells_checks_each_cell_against_the_declared_extent_or_else_against_the_others(tmp_path):
    steps = [tmp_path / f"seed{seed}" / "steps.csv" for seed in (0, 1)]
    problems = [tmp_path / f"seed{seed}" / "eval_problems.csv" for seed in (0, 1)]
    for seed in (0, 1):
        STEPS.write(steps_table(range(1, 6), seed=seed), steps[seed])
        EVAL_PROBLEMS.write(eval_problems_table(EVALUATIONS, seed=seed), problems[seed])
    declared = extent("--expect-steps", "5", "--eval-every", "2", "--own-sampler")
    read_steps, read_problems = read_cells(steps, problems, declared)
    assert len(read_steps) == 10 and len(read_problems) == 2 * len(EVALUATIONS) * 3
    with pytest.raises(tables.IncompleteTableError, match=rf"{steps[0]} \(steps table\): incomplete: .* step 6-7 "
                                                          r"\(expected from the config"):
        read_cells(steps, problems, extent("--expect-steps", "7", "--eval-every", "2", "--own-sampler"))
    with pytest.raises(ValueError, match=r"--expect-steps needs --eval-every"):
        read_cells(steps, problems, extent("--expect-steps", "5"))
    STEPS.write(steps_table(range(1, 4), seed=1), steps[1])  # seed 1 cut at step 3
    with pytest.raises(tables.IncompleteTableError, match=rf"{steps[1]} .* step 4-5"):
        read_cells(steps, problems, declared)
    with pytest.raises(tables.IncompleteTableError, match=rf"{steps[1]} .* step 4-5 \(expected from the other rows"):
        read_cells(steps, problems)  # no extent: every cell holds the steps some cell holds


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
