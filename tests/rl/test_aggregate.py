"""Curves over seeds (ead.rl.aggregate): the unbiased estimators averaged over seeds and problems, and no greedy
accuracy when greedy was not graded."""

import numpy as np
import pandas as pd
import pytest

from ead.metrics import pass_at_k, verl_best_at_k
from ead.rl.aggregate import eval_curves


def test_eval_curves_average_the_unbiased_estimators_over_seeds_and_problems():
    rows = []
    correct = {0: [0, 3, 16, 5], 1: [1, 0, 16, 8]}
    for seed, counts in correct.items():
        for problem, c in enumerate(counts):
            rows.append({"policy": "p", "algorithm": "dapo", "sampler": "ead", "n": 8, "seed": seed, "step": 10,
                         "evaluated_with": "eval_tau",
                         "problem_id": problem, "num_samples": 16, "num_correct": c, "greedy_correct": float(c > 4),
                         "lr": 1e-5, "tis": "none", "tis_cap": 2.0, "loss_mode": "vanilla", "schedule_params": "{}",
                         "fixed_tau_trains_at": "behaviour", "eval_tau": 1.0})
    curves = eval_curves(pd.DataFrame(rows), [1, 16]).set_index("metric")
    expected = np.mean([pass_at_k([16] * 4, counts, 16).mean() for counts in correct.values()])
    assert curves.loc["pass@16", "value"] == pytest.approx(expected)
    assert curves.loc["worst@16", "value"] == pytest.approx(0.25)  # only problem 2 is always right
    assert curves.loc["greedy_accuracy", "value"] == pytest.approx(4 / 8)  # c > 4 on problems 2 and 3
    # verl's bootstrap best@16 / worst@16 (with replacement) next to the unbiased ones, under their own names
    verl_best = np.mean([verl_best_at_k([16] * 4, counts, 16).mean() for counts in correct.values()])
    assert curves.loc["verl_best@16", "value"] == pytest.approx(verl_best)
    assert verl_best < curves.loc["pass@16", "value"]
    assert (curves["num_seeds"] == 2).all() and (curves["ci_low"] <= curves["value"]).all()


def test_eval_curves_report_no_greedy_accuracy_when_greedy_was_not_graded():
    """The verl backend writes greedy_correct = NaN (one sampled validation setting, no greedy pass): the curves
    then carry Pass@k / Worst@k only, unchanged; a cell graded for only some problems is an error."""
    rows = []
    for seed, counts in {0: [0, 3, 16], 1: [1, 0, 16]}.items():
        for problem, c in enumerate(counts):
            rows.append({"policy": "p", "algorithm": "dapo", "sampler": "ead", "n": 8, "seed": seed, "step": 20,
                         "evaluated_with": "eval_tau",
                         "problem_id": f"h{problem}", "num_samples": 16, "num_correct": c,
                         "greedy_correct": float("nan"), "lr": 2e-6, "tis": "none", "tis_cap": 2.0,
                         "loss_mode": "vanilla", "schedule_params": "{}", "fixed_tau_trains_at": "behaviour",
                         "eval_tau": 1.0})
    table = pd.DataFrame(rows)
    curves = eval_curves(table, [1, 16]).set_index("metric")
    assert sorted(curves.index) == ["pass@1", "pass@16", "verl_best@16", "verl_worst@16", "worst@1", "worst@16"]
    graded = eval_curves(table.assign(greedy_correct=0.0), [1, 16]).set_index("metric")
    assert graded.loc["greedy_accuracy", "value"] == 0.0
    assert graded.drop(index="greedy_accuracy")["value"].equals(curves["value"])
    partly = table.assign(greedy_correct=[1.0] + [float("nan")] * (len(table) - 1))
    with pytest.raises(ValueError, match="greedy_correct is missing for some problems or seeds"):
        eval_curves(partly, [1, 16])
