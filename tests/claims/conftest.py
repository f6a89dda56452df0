"""What the tests of the RL claims and of premise G4 share: a cell's evaluation rows and G4's thresholds."""

import pandas as pd

from ead.tables import SETTINGS_COLUMNS
from tests.conftest import CELL, FILLER

SAMPLES = 16


THRESHOLDS = dict(min_effect=0.08, min_ci_low=0.05)


def evaluation_rows(sampler: str, correct: dict[tuple[int, int], list[int]], **cell) -> pd.DataFrame:
    """eval_problems rows of one sampler: ``correct[(seed, step)]`` is the correct count (of 16) per problem."""
    rows = [dict(**{**CELL, **cell}, sampler=sampler, seed=seed, step=step, evaluated_with="eval_tau",
                 problem_id=f"q{i:02d}", num_samples=SAMPLES, num_correct=c, greedy_correct=0.0)
            for (seed, step), counts in correct.items() for i, c in enumerate(counts)]
    return pd.DataFrame(rows).assign(**{c: FILLER[k] for c, k in SETTINGS_COLUMNS.items()})
