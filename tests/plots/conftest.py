"""What several figure tests share: the line styles a figure drew, a grid's tables to draw from, and closing every
figure a test left open (pyplot keeps them, and their memory, until closed)."""

import json

import pandas as pd
import pytest

from ead.settings.rl import sampler_schedule
from ead.tables import SETTINGS_COLUMNS, TRAIN_METRICS
from tests.conftest import FILLER


@pytest.fixture(autouse=True)
def close_figures():
    """After each figure test, the figures it drew and checked are closed."""
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


def grid_tables(config, experiment, correct):
    """eval_problems and steps tables of an experiment's cells: per (sampler, seed) the correct counts of 3 problems
    at step 16 (0 at step 0), with each cell's schedule recorded as its cells do."""
    spec = config["rl"]["experiments"][experiment]
    problems, steps = [], []
    for sampler in spec["samplers"]:
        settings = {**{c: FILLER[k] for c, k in SETTINGS_COLUMNS.items()},
                    "schedule_params": json.dumps(sampler_schedule(config, sampler), sort_keys=True)}
        for seed in spec["seeds"]:
            cell = dict(policy=spec["policies"][0], algorithm=spec["algorithms"][0], n=spec["n"][0], sampler=sampler,
                        seed=seed, **settings)
            for step in (0, 16):
                for i, count in enumerate(correct(sampler, seed)):
                    problems.append(dict(cell, step=step, evaluated_with="eval_tau", problem_id=f"q{i}",
                                         num_samples=16, num_correct=count if step else 4, greedy_correct=0.0))
            steps += [dict(cell, step=s, **{m: 0.0 for m in TRAIN_METRICS}) for s in range(1, 17)]
    return pd.DataFrame(problems), pd.DataFrame(steps)


def styles_of(ax) -> dict:
    return {line.get_label(): (str(line.get_linestyle()), line.get_marker()) for line in ax.get_lines()
            if not line.get_label().startswith("_")}
