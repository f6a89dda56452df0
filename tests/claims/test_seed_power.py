"""Sizing a paired claim's seeds from one sampler's pilot seeds (ead.claims.seed_power)."""

import numpy as np
import pandas as pd
import pytest

from ead.claims.seed_power import claim_matrix, predicted_mde, pseudo_pair_mde, seed_power_table, variance_components
from ead.metrics import POWER_Z, two_way_bootstrap_means


def eval_rows(correct: dict[tuple[int, int], list[int]], samples: int = 4) -> pd.DataFrame:
    """eval_problems rows of one cell: correct[(seed, step)] is the correct count per problem."""
    return pd.DataFrame([{"policy": "p", "algorithm": "dapo", "sampler": "tau1.0", "n": 8, "seed": seed, "step": step,
                          "problem_id": f"q{i}", "num_samples": samples, "num_correct": c,
                          "evaluated_with": "eval_tau"}
                         for (seed, step), counts in correct.items() for i, c in enumerate(counts)])


def test_the_claim_matrix_averages_the_curve_after_step_0_per_seed_and_problem():
    rows = eval_rows({(0, 0): [0, 0], (0, 4): [2, 4], (0, 8): [4, 0], (1, 0): [0, 0], (1, 4): [0, 0], (1, 8): [4, 4]})
    own = eval_rows({(0, 8): [0, 0]}).assign(evaluated_with="own_sampler")  # never read
    curve = claim_matrix(pd.concat([rows, own]), "pass@1", "curve")
    assert curve.tolist() == [[0.75, 0.5], [0.5, 0.5]]  # step 0 left out
    assert claim_matrix(rows, "pass@1", "last").tolist() == [[1.0, 0.0], [1.0, 1.0]]
    with pytest.raises(ValueError, match="one \\(policy, algorithm, sampler, n\\)"):
        claim_matrix(pd.concat([rows, rows.assign(sampler="ead")]), "pass@1", "curve")
    # the training pool's evaluation is read only when asked for, and a pilot without it is refused by name
    pool = eval_rows({(0, 4): [4, 4], (1, 4): [0, 4]}).assign(evaluated_with="train_pool")
    assert claim_matrix(pd.concat([rows, pool]), "pass@1", "last", "train_pool").tolist() == [[1.0, 1.0], [0.0, 1.0]]
    assert claim_matrix(pd.concat([rows, pool]), "pass@1", "last").tolist() == [[1.0, 0.0], [1.0, 1.0]]
    with pytest.raises(ValueError, match="evaluated_with = 'train_pool'"):
        claim_matrix(rows, "pass@1", "curve", "train_pool")


def test_variance_components_recover_a_seed_and_an_interaction_spread():
    rng = np.random.default_rng(0)
    seeds, problems, seed_sd, interaction_sd = 400, 300, 0.03, 0.2
    matrix = (rng.normal(0, 0.3, problems)[None, :] + rng.normal(0, seed_sd, seeds)[:, None]
              + rng.normal(0, interaction_sd, (seeds, problems)))
    seed_var, interaction_var = variance_components(matrix)
    assert np.sqrt(interaction_var) == pytest.approx(interaction_sd, rel=0.02)
    assert np.sqrt(seed_var) == pytest.approx(seed_sd, rel=0.1)


def test_the_predicted_mde_matches_the_bootstrap_of_an_independent_difference():
    rng = np.random.default_rng(1)
    seeds, problems, seed_sd, interaction_sd = 6, 200, 0.02, 0.15
    effects = rng.normal(0, 0.3, problems)

    def cell():
        noise = rng.normal(0, interaction_sd, (seeds, problems))
        return effects[None, :] + rng.normal(0, seed_sd, seeds)[:, None] + noise

    predicted = predicted_mde(seed_sd ** 2, interaction_sd ** 2, seeds, problems)
    bootstrapped = [POWER_Z * two_way_bootstrap_means(cell() - cell(), resamples=400, seed=i).std(ddof=1)
                    for i in range(30)]
    assert np.mean(bootstrapped) == pytest.approx(predicted, rel=0.2)
    # the pilot's own seeds, paired two by two: the same estimator on a null difference
    check, pairs = pseudo_pair_mde(np.vstack([cell(), cell()]), resamples=400, seed=0)
    assert pairs == 6 and check == pytest.approx(predicted, rel=0.5)


def test_the_table_names_the_seeds_needed_for_the_target():
    rng = np.random.default_rng(2)
    matrix = rng.normal(0.5, 0.1, (4, 50))
    table = seed_power_table(matrix, [2, 8], [50, 200], 0.02, resamples=200, seed=0)
    assert table[["seeds", "problems"]].values.tolist() == [[2, 50], [8, 50], [2, 200], [8, 200]]
    for row in table.itertuples():
        at_needed = predicted_mde(row.seed_sd ** 2, row.interaction_sd ** 2, row.seeds_needed, row.problems)
        assert at_needed <= 0.02 + 1e-12
        if row.seeds_needed > 2:
            assert predicted_mde(row.seed_sd ** 2, row.interaction_sd ** 2, row.seeds_needed - 1, row.problems) > 0.02
