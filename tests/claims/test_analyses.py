"""The claims F1-F3 on the analyses' samples (ead.claims.analyses): the entropy, forking and majority claims on
small cases, and their rows in the claims table."""

import json

import numpy as np
import pandas as pd
import pytest

from ead.claims import analyses as claims
from ead.tables import CLAIMS, ENTROPY_SAMPLES, FORKING_SAMPLES, MAJORITY_SAMPLES
from tests.conftest import fork_samples


def test_forking_claim_is_the_paired_difference_of_the_first_and_last_fork_point():
    differences, first, last = claims.first_minus_last_fork(fork_samples(), "pass@4")
    assert (first, last) == (0, 8) and differences.tolist() == [1.0, 0.0, -1.0]
    row = claims.claim_row({"id": "F2", "figure": "fig02", "statement": "s", "analysis": "forking", "model": "tiny",
                            "metric": "pass@4"}, fork_samples(), resamples=200, seed=0)
    assert row["effect"] == pytest.approx(0.0) and row["verdict"] == "inconclusive" and row["num_units"] == 3
    assert np.isnan(row["smallest_effect"])
    wide = claims.claim_row({"id": "F2", "figure": "fig02", "statement": "s", "analysis": "forking", "model": "tiny",
                             "metric": "pass@4", "smallest_effect": 1.5}, fork_samples(), resamples=200, seed=0)
    assert (wide["verdict"], wide["smallest_effect"]) == ("negligible", 1.5) and "(-1.5, 1.5)" in wide["rule"]
    assert row["sampler"] == "fork after p = 0" and row["baseline"] == "fork after p = 8" and row["n"] == 4
    with pytest.raises(ValueError, match="maj@4 is not measured on task 'countdown'"):
        claims.first_minus_last_fork(fork_samples(), "maj@4")



def test_a_claim_whose_paired_differences_have_no_spread_states_no_power():
    """At smoke size every fork point can give the same result (here: nothing correct anywhere): the MDE is 0, and
    the scope says no power can be stated instead of "detects a paired difference of 0 or more"."""
    samples = fork_samples().assign(correct=0.0)
    row = claims.claim_row({"id": "F2", "figure": "fig02", "statement": "s", "analysis": "forking", "model": "tiny",
                            "metric": "pass@4", "smallest_effect": 0.02}, samples, resamples=200, seed=0)
    assert row["mde"] == 0.0 and row["verdict"] == "inconclusive"  # a zero-width CI is not a negligible effect
    assert "every paired difference is the same, so no power can be stated" in row["scope"]
    assert "detects" not in row["scope"]

def entropy_claim_samples(late_level):
    """Two questions x 2 responses: entropy 1.0 on positions 0-1, ``late_level`` from position 2 on; one response
    has only 3 tokens (no position >= 3)."""
    rows = []
    for q in range(2):
        for i, length in enumerate((6, 3 if q == 0 else 5)):
            entropies = [1.0, 1.0] + [late_level + 0.1 * q] * (length - 2)
            rows.append({"prompt_id": f"q{q}", "sample_id": i, "text": "", "num_tokens": length, "finished": True,
                         "mean_entropy": float(np.mean(entropies)), "token_ids": list(range(length)),
                         "entropies": entropies})
    return pd.DataFrame(rows).assign(model_name="tiny", engine="hf", task="countdown")


def test_entropy_claim_pairs_early_and_late_positions_within_responses():
    differences, dropped = claims.early_minus_late(entropy_claim_samples(0.2), early=2, late=3)
    assert dropped == 1 and differences.tolist() == pytest.approx([0.8, 0.7])
    spec = {"id": "F1", "figure": "fig01", "statement": "s", "analysis": "entropy_by_position", "model": "tiny",
            "early": 2, "late": 3}
    assert claims.claim_row(spec, entropy_claim_samples(0.2), resamples=200, seed=0)["verdict"] == "supported"
    assert claims.claim_row(spec, entropy_claim_samples(1.5), resamples=200, seed=0)["verdict"] == "contradicted"
    with pytest.raises(ValueError, match="no response is longer than late = 9 tokens"):
        claims.early_minus_late(entropy_claim_samples(0.2), early=2, late=9)


def majority_claim_samples():
    """Arithmetic Maj@N samples: 3 questions x 4 samples under EAD and tau 0.6 / 1.0, with vote groups and scores.

    Every unit answers one way except EAD on q2 (3 votes for the right answer, 1 for a wrong one): there exact Maj@1 =
    3/4 and Maj@4 = 1. Per question Maj@N: EAD (1, 1, 3/4 at N = 1 or 1 at N = 4), tau 0.6 (1, 0, 0), tau 1.0 (0, 0, 0).
    """
    ead = json.dumps({"name": "ead", "tau_max": 1.2})
    answers = {("EAD", ead): [[(0, 1)] * 4, [(0, 1)] * 4, [(0, 1), (1, 0), (0, 1), (0, 1)]],
               ("tau = 0.6", '{"name": "fixed", "tau": 0.6}'): [[(0, 1)] * 4, [(0, 0)] * 4, [(0, 0)] * 4],
               ("tau = 1", '{"name": "fixed", "tau": 1.0}'): [[(0, 0)] * 4, [(0, 0)] * 4, [(0, 0)] * 4]}
    rows = [{"sampler": sampler, "schedule_params": params, "prompt_id": f"q{q}", "sample_id": i, "text": "",
             "num_tokens": 20, "finished": True, "predicted": str(group), "correct": float(score), "vote_group": group}
            for (sampler, params), questions in answers.items() for q, votes in enumerate(questions)
            for i, (group, score) in enumerate(votes)]
    return MAJORITY_SAMPLES.validate(pd.DataFrame(rows).assign(model_name="tiny_arith", engine="hf",
                                                                task="arithmetic"))


def test_majority_claim_pairs_ead_with_the_best_fixed_temperature_by_question():
    samples = majority_claim_samples()
    differences, ead, best = claims.ead_minus_best_fixed(samples, "maj@4")
    assert (ead, best) == ("EAD", "tau = 0.6") and differences.tolist() == pytest.approx([0, 1, 1])
    differences, _, _ = claims.ead_minus_best_fixed(samples, "maj@1")
    assert differences.tolist() == pytest.approx([0, 1, 0.75])
    spec = {"id": "F3", "figure": "fig09", "statement": "s", "analysis": "majority_scaling", "model": "tiny_arith",
            "metric": "maj@4"}
    row = claims.claim_row(spec, samples, resamples=200, seed=0)
    assert row["effect"] == pytest.approx(2 / 3) and row["baseline"] == "best fixed: tau = 0.6" and row["n"] == 4
    with pytest.raises(ValueError, match="N exceeds the samples per question"):
        claims.ead_minus_best_fixed(samples, "maj@5")
    with pytest.raises(ValueError, match="one EAD sampler and a fixed one"):
        claims.ead_minus_best_fixed(samples[samples["sampler"] != "EAD"], "maj@4")


def test_claims_job_writes_claims_rows_that_follow_the_rl_claims(tmp_path):
    entropy_path, forking_path = tmp_path / "e.parquet", tmp_path / "f.parquet"
    ENTROPY_SAMPLES.write(entropy_claim_samples(0.2), entropy_path)
    FORKING_SAMPLES.write(fork_samples(), forking_path)
    specs = [{"id": "F1", "figure": "fig01", "statement": "early", "analysis": "entropy_by_position", "model": "tiny",
              "early": 2, "late": 3},
             {"id": "F2", "figure": "fig02", "statement": "forks", "analysis": "forking", "model": "tiny",
              "metric": "pass@2"}]
    out = tmp_path / "analysis_claims.csv"
    majority_path = tmp_path / "m.parquet"
    MAJORITY_SAMPLES.write(majority_claim_samples(), majority_path)
    specs.append({"id": "F3", "figure": "fig09", "statement": "votes", "analysis": "majority_scaling",
                  "model": "tiny_arith", "metric": "maj@4"})
    claims.main(["--claims", json.dumps(specs), "--entropy-by-position-samples", str(entropy_path),
                 "--forking-samples", str(forking_path), "--majority-scaling-samples", str(majority_path),
                 "--resamples", "200", "--seed", "1", "--out", str(out)])
    table = CLAIMS.read(out)
    assert list(table["claim"]) == ["F1", "F2", "F3"] and set(table["algorithm"]) == {"none (no RL)"}
    assert (table["num_seeds"] == 1).all() and table["scope"].str.startswith("one fixed model").all()
    with pytest.raises(SystemExit):  # a claim whose model's samples were not given
        claims.main(["--claims", json.dumps(specs), "--entropy-by-position-samples", str(entropy_path),
                     "--forking-samples", "--majority-scaling-samples", "--resamples", "200", "--seed", "1", "--out",
                     str(tmp_path / "x.csv")])
