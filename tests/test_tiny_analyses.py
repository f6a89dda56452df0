"""The sampling analyses on the tiny countdown policies: token roles of hand-written responses, entropy of a known
distribution, entropy by role and Pass@k of forks on hand-built samples, the claims of Figs. 1 and 2 on small cases
(and their rows in the claims table), and the entropy and forking jobs end to end on a tiny countdown policy."""

import json
import logging
import math

import numpy as np
import pandas as pd
import pytest
import torch

from ead.analyses import forking
from ead.analyses.entropy_by_position import entropy_by_role, token_roles, write_role_summary
from ead.analyses.entropy_by_position import main as entropy_main
from ead.analyses.forking import main as forking_main
from ead.analyses.majority_scaling import main as majority_main
from ead.claims import analyses as claims
from ead.data.countdown import ROLES, response_roles
from ead.metrics import bootstrap_mean_ci, entropy_from_log_probs
from ead.tables import CLAIMS, ENTROPY_BY_ROLE, ENTROPY_SAMPLES, FORKING_SAMPLES, MAJORITY_SAMPLES

LOG = logging.getLogger("test")


def roles_of(text):
    """Run-length view of response_roles: [(characters, role), ...]."""
    runs = []
    for char, role in zip(text, response_roles(text)):
        if runs and runs[-1][1] == role:
            runs[-1] = (runs[-1][0] + char, role)
        else:
            runs.append((char, role))
    return runs


def test_roles_of_a_hand_written_chain():
    text = "7*5=35\n35+12=47\n\\boxed{41}"
    assert roles_of(text) == [
        ("7", "operand"), ("*", "operator"), ("5", "operand"), ("=", "syntax"), ("35", "result"), ("\n", "syntax"),
        ("35", "operand"), ("+", "operator"), ("12", "operand"), ("=", "syntax"), ("47", "result"),
        ("\n\\boxed{", "syntax"), ("41", "answer"), ("}", "syntax")]
    assert len(response_roles(text)) == len(text) and set(response_roles(text)) <= set(ROLES)


def test_roles_follow_the_verifier_s_forms_and_mark_malformed_lines():
    # spaces and the x / ÷ operators the verifier accepts; a wrong equation still has its roles
    assert roles_of("12 x 3 = 37") == [("12", "operand"), (" ", "syntax"), ("x", "operator"), (" ", "syntax"),
                                       ("3", "operand"), (" = ", "syntax"), ("37", "result")]
    assert roles_of("20÷4=5") == [("20", "operand"), ("÷", "operator"), ("4", "operand"), ("=", "syntax"),
                                  ("5", "result")]
    # a line that is neither an equation nor the box is "other" as a whole; blank lines are newlines only
    assert roles_of("9-=2\n\n\\boxed{}") == [("9-=2", "other"), ("\n\n\\boxed{}", "syntax")]
    assert roles_of("\\boxed{ 7 }.") == [("\\boxed{ ", "syntax"), ("7", "answer"), (" }.", "syntax")]
    assert response_roles("") == [] and roles_of("\n3+4=7") == [("\n", "syntax"), ("3", "operand"),
                                                               ("+", "operator"), ("4", "operand"), ("=", "syntax"),
                                                               ("7", "result")]


def test_token_roles_add_the_end_token_and_refuse_a_broken_count():
    text = "1+2=3\n\\boxed{3}"
    assert token_roles(text, len(text) + 1, True)[-1] == "end" and token_roles(text, len(text), False)[-1] == "syntax"
    # a special token sampled inside the response decodes to nothing: tokens no longer map onto characters
    assert token_roles(text, len(text) + 2, True) is None


def test_entropy_of_a_known_distribution():
    uniform = torch.log(torch.full((1, 8), 1 / 8))
    point = torch.log_softmax(torch.tensor([[0.0, -1e4, -1e4]]), -1)
    two = torch.log(torch.tensor([[0.25, 0.75]]))
    assert entropy_from_log_probs(uniform).item() == pytest.approx(math.log(8))
    assert entropy_from_log_probs(point).item() == pytest.approx(0.0, abs=1e-6)
    assert entropy_from_log_probs(two).item() == pytest.approx(-(0.25 * math.log(0.25) + 0.75 * math.log(0.75)))


def role_samples():
    """Entropy samples of two questions: q0 with two finished responses, q1 with one unfinished response and one
    whose token count is broken (a special token inside). Entropies: operand 1, operator 2, everything else 0.1,
    except q1's operator 4."""
    value = {"operand": 1.0, "operator": 2.0}

    def row(prompt_id, sample_id, text, finished, operator=2.0, extra_tokens=0):
        roles = response_roles(text) + ["end"] * finished
        entropies = [operator if r == "operator" else value.get(r, 0.1) for r in roles] + [0.1] * extra_tokens
        return {"prompt_id": prompt_id, "sample_id": sample_id, "text": text, "num_tokens": len(entropies),
                "finished": finished, "mean_entropy": float(np.mean(entropies)),
                "token_ids": list(range(len(entropies))), "entropies": entropies}

    rows = [row("q0", 0, "1+2=3\n\\boxed{3}", True), row("q0", 1, "12*3=36\n\\boxed{36}", True),
            row("q1", 0, "4-1=3\n3", False, operator=4.0), row("q1", 1, "2+2=4", True, extra_tokens=1)]
    return ENTROPY_SAMPLES.validate(pd.DataFrame(rows).assign(model_name="tiny", engine="hf", task="countdown"))


def test_entropy_by_role_is_a_mean_over_questions_of_per_question_token_means(tmp_path):
    samples = role_samples()
    table = write_role_summary(samples, tmp_path / "roles.csv", resamples=200, seed=0, log=LOG)
    by_role = ENTROPY_BY_ROLE.read(tmp_path / "roles.csv").set_index("role")
    assert list(table["role"]) == ["operand", "operator", "result", "answer", "syntax", "other", "end"]
    # operator: q0 has two tokens at 2.0, q1 one at 4.0 -> per-question means 2 and 4 -> 3, not the token mean 8/3
    assert by_role.loc["operator", "mean_entropy"] == pytest.approx(3.0)
    assert by_role.loc["operator", ["ci_low", "ci_high"]].tolist() == pytest.approx(
        list(bootstrap_mean_ci([2.0, 4.0], resamples=200, seed=0))[1:])
    assert by_role.loc["operand", "num_tokens"] == 2 + 3 + 2 and by_role.loc["operand", "mean_entropy"] == 1.0
    # the unfinished line "3" is other; the broken response is left out and counted; only q0's responses end
    assert by_role.loc["other", "num_questions"] == 1 and by_role.loc["end", "num_tokens"] == 2
    assert (by_role["responses_left_out"] == 1).all() and set(by_role["task"]) == {"countdown"}


def test_entropy_by_role_refuses_other_tasks_and_other_tokenizers(tmp_path):
    with pytest.raises(ValueError, match="token roles are defined on countdown responses"):
        write_role_summary(role_samples().assign(task="mmlu"), tmp_path / "r.csv", resamples=100, seed=0, log=LOG)
    broken = role_samples().assign(num_tokens=lambda t: t["num_tokens"] + 5)
    with pytest.raises(ValueError, match="none of the 4 responses has one token per character"):
        entropy_by_role(broken)


def fork_samples():
    """Forking samples on countdown: 3 references x fork points 0 / 8 x 4 continuations with known correct counts."""
    correct = {("r0", 0): [1, 0, 0, 1], ("r0", 8): [0, 0, 0, 0], ("r1", 0): [1, 1, 1, 1], ("r1", 8): [1, 0, 0, 0],
               ("r2", 0): [0, 0, 0, 0], ("r2", 8): [0, 0, 0, 1]}
    rows = [{"question_id": unit.replace("r", "q"), "unit": unit, "fork_point": p, "sample_id": i, "text": "",
             "num_tokens": 20, "finished": True, "predicted": "5", "correct": float(c), "vote_group": 0}
            for (unit, p), values in correct.items() for i, c in enumerate(values)]
    return FORKING_SAMPLES.validate(pd.DataFrame(rows).assign(model_name="tiny", engine="hf", task="countdown"))


def test_forking_on_countdown_reports_pass_at_k_only():
    per_unit = forking.per_unit_metrics(fork_samples(), [1, 2, 4])
    assert set(per_unit["metric"]) == {"pass@k"}  # countdown answers are not unique: no Maj@k
    values = per_unit.set_index(["unit", "fork_point", "k"])["value"]
    # r0 at p = 0: 2 of 4 correct -> pass@1 = 0.5, pass@2 = 1 - C(2,2)/C(4,2) = 5/6, pass@4 = 1
    assert values[("r0", 0, 1)] == pytest.approx(0.5) and values[("r0", 0, 2)] == pytest.approx(5 / 6)
    assert values[("r0", 0, 4)] == 1.0 and values[("r0", 8, 4)] == 0.0 and values[("r2", 8, 2)] == pytest.approx(0.5)


def test_forking_claim_is_the_paired_difference_of_the_first_and_last_fork_point():
    differences, first, last = claims.first_minus_last_fork(fork_samples(), "pass@4")
    assert (first, last) == (0, 8) and differences.tolist() == [1.0, 0.0, -1.0]
    row = claims.claim_row({"id": "F2", "figure": "fig02", "statement": "s", "analysis": "forking", "model": "tiny",
                            "metric": "pass@4"}, fork_samples(), resamples=200, seed=0)
    assert row["effect"] == pytest.approx(0.0) and row["verdict"] == "inconclusive" and row["num_units"] == 3
    assert row["sampler"] == "fork after p = 0" and row["baseline"] == "fork after p = 8" and row["n"] == 4
    with pytest.raises(ValueError, match="maj@4 is not measured on task 'countdown'"):
        claims.first_minus_last_fork(fork_samples(), "maj@4")


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


@pytest.fixture(scope="module")
def tiny_policy(tmp_path_factory):
    """A randomly initialised tiny countdown policy (character tokenizer) and a countdown table with a test split."""
    from ead.data.countdown import generate_countdown
    from ead.models.tiny_policy import TinyPolicyShape, build_model, build_tokenizer

    root = tmp_path_factory.mktemp("tiny_policy")
    tokenizer = build_tokenizer()
    model = build_model(tokenizer, TinyPolicyShape(hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                                                   intermediate_size=64, max_position_embeddings=64), seed=0)
    model.save_pretrained(root / "policy")
    tokenizer.save_pretrained(root / "policy")
    generate_countdown(seed=0, n_train=8, n_val=2, n_test=6).to_parquet(root / "countdown.parquet")
    return root / "policy", root / "countdown.parquet"


def test_entropy_and_forking_jobs_run_a_tiny_policy_on_countdown(tiny_policy, tmp_path):
    model, data = tiny_policy
    common = ["--model", str(model), "--data", str(data), "--task", "countdown", "--split", "test", "--prompt-format",
              "plain", "--threads", "1", "--max-new-tokens", "12", "--batch-size", "8", "--engine", "hf", "--dtype",
              "float32", "--seed", "0", "--tau", "1.0"]
    entropy_main([*common, "--question-seed", "0", "--num-questions", "3", "--samples", "2", "--samples-out",
                  str(tmp_path / "e.parquet")])
    samples = ENTROPY_SAMPLES.read(tmp_path / "e.parquet")
    assert len(samples) == 6 and set(samples["split"]) == {"test"} and set(samples["task"]) == {"countdown"}
    assert set(samples["prompt_id"]) <= {f"countdown/s0/test/{i}" for i in range(6)}
    # every token of every response with token roles has exactly one role (a random policy may sample <pad> inside)
    kept = [token_roles(t, n, f) is not None for t, n, f in zip(samples.text, samples.num_tokens, samples.finished)]
    roles = entropy_by_role(samples, resamples=100)
    assert roles["num_tokens"].sum() == samples.loc[kept, "num_tokens"].sum()
    assert (roles["responses_left_out"] == len(samples) - sum(kept)).all()
    forking_main([*common, "--question-seed", "1", "--prefix-selection", "random", "--num-questions", "2",
                  "--reference-samples", "1", "--fork-points", "0", "2",
                  "--continuations", "2", "--samples-out", str(tmp_path / "f.parquet"), "--k", "1", "2",
                  "--bootstrap", "100", "--out", str(tmp_path / "f.csv")])
    assert set(pd.read_csv(tmp_path / "f.csv")["metric"]) == {"pass@k"}
    with pytest.raises(SystemExit, match="--task countdown needs --prompt-format plain"):
        entropy_main([*common, "--question-seed", "0", "--prompt-format", "chat", "--num-questions", "1", "--samples",
                      "1", "--samples-out",
                      str(tmp_path / "x.parquet")])


def test_majority_job_refuses_countdown(tiny_policy, tmp_path, capsys):
    model, data = tiny_policy
    with pytest.raises(SystemExit):
        majority_main(["--model", str(model), "--data", str(data), "--task", "countdown", "--num-questions", "1",
                       "--engine", "hf", "--dtype", "float32", "--question-seed", "0", "--seed", "0", "--batch-size",
                       "8",
                       "--samples", "2", "--max-new-tokens", "8", "--threads", "1", "--schedules",
                       '{"name": "fixed", "tau": 1.0}', "--samples-out", str(tmp_path / "m.parquet")])
    message = "Maj@N votes on answers, and countdown's correct responses do not share one answer"
    assert message in capsys.readouterr().err


def test_figures_draw_the_tiny_policies_tables(tmp_path):
    from ead.analyses.entropy_by_position import write_summary as write_entropy_summary
    from ead.plots.fig01_entropy_by_position import main as fig01_main
    from ead.plots.fig02_forking import main as fig02_main

    settings = {"num_questions_requested": 2, "samples_per_question": 2}
    write_entropy_summary(role_samples().assign(**settings), tmp_path / "entropy.csv", resamples=100, seed=0, log=LOG)
    write_role_summary(role_samples(), tmp_path / "roles.csv", resamples=100, seed=0, log=LOG)
    forking.write_summary(fork_samples().assign(num_questions_used=3, prefix_selection="random"), tmp_path / "f.csv",
                          k=[1, 4], resamples=100, seed=0, log=LOG)
    fig01_main(["--tables", str(tmp_path / "entropy.csv"), "--role-tables", str(tmp_path / "roles.csv"),
                "--png", str(tmp_path / "1.png"), "--pdf", str(tmp_path / "1.pdf")])
    fig02_main(["--tables", str(tmp_path / "f.csv"), "--png", str(tmp_path / "2.png"),
                "--pdf", str(tmp_path / "2.pdf")])
    for name in ("1.png", "1.pdf", "2.png", "2.pdf"):
        assert (tmp_path / name).stat().st_size > 1000, name
