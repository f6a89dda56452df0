"""The CPU backend's grid cell (ead.rl.train): trainer log-probs equal the sampler's, kill-and-resume, shared
prompts and random numbers within a seed, forking-token and annealed training, the per-step statistics, the
evaluations' random numbers, timeouts, a fixed training pool and its evaluation, and the cell document it reads."""

import argparse
import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from ead.data.countdown import generate_countdown
from ead.data.tasks import get_task
from ead.io import write_table
from ead.models import save_hf_model
from ead.models.tiny_policy import TinyPolicyShape, build_model, build_tokenizer, encode_strict
from ead.rl.losses import forking_token_mask
from ead.rl.train import group_outcomes, response_log_probs
from ead.samplers.hf import left_pad, sample
from ead.schedule import AnnealedSchedule, FixedTemperature
from ead.settings.rl import Cell, cell_settings
from ead.tables import EVAL_FAILURES
from tests.conftest import (
    CONFIG,
    LOGIT_ATOL,
    log_prob_tolerance,
    profile_by_name,
    recorded_logits,
    sampled_logits,
)

ROOT = Path(__file__).resolve().parents[2]


def test_the_cpu_trainer_reads_its_document_and_refuses_a_key_it_does_not_know(tmp_path):
    from ead.rl.train import main

    settings = cell_settings(profile_by_name("smoke"), Cell("tiny1m", "dapo", "ead_tis", 8, 0))
    document = settings.to_json().replace('"every"', '"evry"')
    with pytest.raises(SystemExit, match="cell settings: unknown key 'eval.evry'"):
        main(["--policy-dir", "p", "--data", "d", "--base-eval", "b", "--base-failures", "f", "--settings", document,
              "--threads", "1",
              "--out-dir", str(tmp_path), "--checkpoint-dir", str(tmp_path / "ckpt")])


# --- trainer log-probs ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("schedule, temperature", [(AnnealedSchedule(tau_min=0.3), 1.0),
                                                   (FixedTemperature(0.6), 0.6)])
def test_sampler_log_probs_equal_a_fresh_trainer_forward(schedule, temperature):
    """pi_old is taken from the sampler (target at tau 1 / behaviour at tau); it must match the trainer's forward."""
    tokenizer = build_tokenizer()
    model = build_model(tokenizer, TinyPolicyShape(hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                                   intermediate_size=64), seed=0).eval()
    prompts = [encode_strict(tokenizer, q) for q in ("Numbers: 3 5\nTarget: 8\n", "Numbers: 12 4 7\nTarget: 41\n")]
    input_ids, attention_mask = left_pad([p for p in prompts for _ in range(3)], tokenizer.pad_token_id)
    with recorded_logits(model) as sampler_calls:
        batch = sample(model, input_ids, attention_mask, schedule, max_new_tokens=12,
                       eos_token_ids=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id, step=3,
                       generator=torch.Generator().manual_seed(0))
    with torch.no_grad(), recorded_logits(model) as trainer_calls:
        fresh = response_log_probs(model, input_ids, attention_mask, batch.token_ids, batch.response_mask,
                                   temperature)
    sampled = batch.behaviour_logprobs if isinstance(schedule, FixedTemperature) else batch.target_logprobs
    valid = batch.response_mask
    # The trainer's one pass and the sampler's KV-cached steps round the logits apart (float32, CPU-kernel dependent);
    # the log-probs at logits / temperature then differ by at most 2 * gap / temperature.
    prompt_length, length = input_ids.shape[1], batch.token_ids.shape[1]
    trainer_logits = trainer_calls[0][:, prompt_length - 1: prompt_length - 1 + length]
    gap = (sampled_logits(sampler_calls, batch.response_mask) - trainer_logits).abs().amax(-1)
    assert gap[valid].max() < LOGIT_ATOL
    assert ((fresh - sampled).abs() <= log_prob_tolerance(gap, temperature))[valid].all()


# --- kill and resume ------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def rl_inputs(tmp_path_factory):
    root = tmp_path_factory.mktemp("rl")
    data = root / "countdown.parquet"
    table = generate_countdown(seed=2, n_train=120, n_val=6, n_test=4)
    write_table(table, data)
    tokenizer = build_tokenizer()
    model = build_model(tokenizer, TinyPolicyShape(hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                                   intermediate_size=64), seed=0)
    save_hf_model(root / "policy", model, tokenizer)
    base = pd.DataFrame({"problem_id": table[table.split == "val"]["id"].head(4), "num_samples": 4,
                         "num_correct": [0, 1, 0, 2], "greedy_correct": [0.0, 0.0, 1.0, 0.0], "num_timeouts": 0})
    write_table(base, root / "base.csv")
    write_table(base_failures(base, "countdown"), root / "base_failures.csv")
    return root


def base_failures(base: pd.DataFrame, task: str) -> pd.DataFrame:
    """A step-0 failure table that agrees with the per-problem counts ``base``: the correct samples ``ok``, the others
    the task's first failure type."""
    from ead.data.tasks import get_task

    first = get_task(task).failure_types[0]
    rows = [(problem, failure, count) for problem, samples, correct in
            zip(base["problem_id"], base["num_samples"], base["num_correct"])
            for failure, count in [("ok", correct), (first, samples - correct)]]
    others = [(problem, failure, 0) for problem in base["problem_id"] for failure in get_task(task).failure_types[1:]]
    return pd.DataFrame(rows + others, columns=["problem_id", "failure", "num_samples"])


def train_command(root, out, checkpoint, settings):
    """The job's command line, with --k: a direct call with k also writes eval.csv (the workflow's cells leave it to
    ead.rl.cell_eval)."""
    return [sys.executable, "-m", "ead.rl.train", "--policy-dir", str(root / "policy"),
            "--data", str(root / "countdown.parquet"), "--base-eval", str(root / "base.csv"),
            "--base-failures", str(root / "base_failures.csv"),
            "--settings", settings.to_json(), "--threads", "1", "--k", "1", "4", "--out-dir", str(out),
            "--checkpoint-dir", str(checkpoint)]


def small_cell_settings():
    """A 4-step clip_cov / EAD + TIS cell that checkpoints after step 2 (for the kill-and-resume tests)."""
    config = json.loads(json.dumps(CONFIG))
    config["rl"].update(steps=4, prompts_per_step=2, max_new_tokens=24, checkpoint_every=2)
    config["rl"]["eval"].update(limit=4, n=4, every=3, batch_size=16)
    return cell_settings(config, Cell("tiny", "clip_cov", "ead_tis", 4, 0))


@pytest.mark.slow
def test_killed_training_resumes_to_identical_tables(rl_inputs, tmp_path, killed_after_first_checkpoint):
    settings = small_cell_settings()
    straight, resumed = tmp_path / "straight", tmp_path / "resumed"
    subprocess.run(train_command(rl_inputs, straight, tmp_path / "ckpt_a", settings), check=True, capture_output=True)

    killed_after_first_checkpoint(train_command(rl_inputs, resumed, tmp_path / "ckpt_b", settings),
                                  tmp_path / "ckpt_b" / "trainer_state.pt",
                                  timeout_s=180)
    assert not (resumed / "steps.csv").exists()
    rerun = subprocess.run(train_command(rl_inputs, resumed, tmp_path / "ckpt_b", settings), capture_output=True,
                           text=True, check=True)
    assert "resuming from" in rerun.stderr

    clock = ["rollout_s", "grade_s", "update_s", "wall_time_s"]
    for name in ("steps", "eval", "eval_problems", "eval_failures"):
        a, b = pd.read_csv(straight / f"{name}.csv"), pd.read_csv(resumed / f"{name}.csv")
        pd.testing.assert_frame_equal(a.drop(columns=clock, errors="ignore"), b.drop(columns=clock, errors="ignore"))
    steps = pd.read_csv(straight / "steps.csv")
    assert list(steps["step"]) == [1, 2, 3, 4] and steps[["sampler", "algorithm"]].iloc[0].tolist() == [
        "ead_tis", "clip_cov"]
    assert np.isfinite(steps[["reward_mean", "entropy", "grad_norm", "tis_weight_mean"]].to_numpy()).all()
    evaluation = pd.read_csv(straight / "eval.csv")
    assert sorted(evaluation["step"].unique()) == [0, 3, 4]  # every 3 and the last
    assert sorted(evaluation.loc[evaluation["evaluated_with"] == "own_sampler", "step"].unique()) == [4]
    assert not (tmp_path / "ckpt_b").exists()


@pytest.mark.slow
def test_a_checkpoint_of_other_settings_is_discarded_not_resumed(rl_inputs, tmp_path, killed_after_first_checkpoint):
    """Kill a cell after its first checkpoint, edit tau_max, rerun: the job starts over, so every row of its tables
    was produced under the new settings (identical to an uninterrupted run with them)."""
    settings = small_cell_settings()
    edited = dataclasses.replace(settings, schedule={**settings.schedule, "tau_max": 1.5})
    killed_after_first_checkpoint(train_command(rl_inputs, tmp_path / "out", tmp_path / "ckpt", settings),
                                  tmp_path / "ckpt" / "trainer_state.pt", timeout_s=180)
    rerun = subprocess.run(train_command(rl_inputs, tmp_path / "out", tmp_path / "ckpt", edited), capture_output=True,
                           text=True, check=True)
    assert "made with other settings or inputs" in rerun.stderr and "resuming from" not in rerun.stderr
    subprocess.run(train_command(rl_inputs, tmp_path / "straight", tmp_path / "ckpt_straight", edited), check=True,
                   capture_output=True)
    clock = ["rollout_s", "grade_s", "update_s", "wall_time_s"]
    for name in ("steps", "eval_problems"):
        a, b = pd.read_csv(tmp_path / "straight" / f"{name}.csv"), pd.read_csv(tmp_path / "out" / f"{name}.csv")
        pd.testing.assert_frame_equal(a.drop(columns=clock, errors="ignore"), b.drop(columns=clock, errors="ignore"))
    assert json.loads(pd.read_csv(tmp_path / "out" / "steps.csv")["schedule_params"].iloc[0])["tau_max"] == 1.5


def test_cells_of_one_seed_share_prompts_and_rollout_random_numbers(rl_inputs):
    """Common random numbers across the grid: two cells of one seed train on the same prompts at every step, and
    their rollouts use the same random numbers, so where two samplers' distributions agree (EAD's warm-up at tau = 1
    vs tau 1.0) they draw the same tokens; another seed draws other prompts."""
    import logging

    from ead.rl.train import Trainer

    def rollout(sampler, seed=0, step=3):
        config = json.loads(json.dumps(CONFIG))
        config["rl"].update(prompts_per_step=2, max_new_tokens=24)
        config["rl"]["eval"].update(limit=4)
        config["ead"]["warmup"] = 10  # a warm-up at tau = 1, where EAD's distribution equals tau 1.0's
        settings = cell_settings(config, Cell("tiny", "dapo", sampler, 4, seed))
        trainer = Trainer(settings, str(rl_inputs / "policy"), str(rl_inputs / "countdown.parquet"),
                          logging.getLogger("test"))
        input_ids, _, batch, _, _ = trainer.rollout(step)
        return input_ids, batch, trainer.schedule

    ids_fixed, fixed, _ = rollout("tau1.0")
    ids_ead, ead, schedule = rollout("ead")
    assert torch.equal(ids_fixed, ids_ead)  # the same prompts, in the same order
    warmup = int(schedule.warmup)
    both = fixed.response_mask[:, :warmup] & ead.response_mask[:, :warmup]
    assert both.any() and torch.equal(fixed.token_ids[:, :warmup][both], ead.token_ids[:, :warmup][both])
    assert not torch.equal(ead.token_ids, fixed.token_ids)  # after the warm-up EAD samples differently
    ids_other_seed, _, _ = rollout("tau1.0", seed=1)
    assert not torch.equal(ids_other_seed, ids_fixed)


def test_forking_token_training_puts_the_loss_on_the_masked_tokens_only(rl_inputs, monkeypatch):
    """With forking_token_fraction q the trainer hands verl's loss the top-q entropy mask of the rollouts it sampled
    (so the gradient of every other token is 0), and reports the share it kept; without it, the full mask."""
    import logging

    import ead.rl.train as train

    def one_step(algorithm_params):
        config = json.loads(json.dumps(CONFIG))
        config["rl"].update(prompts_per_step=2, max_new_tokens=24)
        config["rl"]["eval"].update(limit=4)
        config["rl"]["algorithms"]["dapo"].update(algorithm_params)
        trainer = train.Trainer(cell_settings(config, Cell("tiny", "dapo", "tau1.0", 4, 0)),
                                str(rl_inputs / "policy"), str(rl_inputs / "countdown.parquet"),
                                logging.getLogger("test"))
        seen = {"masks": []}
        rollout, loss = trainer.rollout, train.policy_loss

        def recording_rollout(step):
            seen["rollout"] = rollout(step)
            return seen["rollout"]

        def recording_loss(config, **kwargs):
            seen["masks"].append(kwargs["response_mask"])
            return loss(config, **kwargs)

        monkeypatch.setattr(trainer, "rollout", recording_rollout)
        monkeypatch.setattr(train, "policy_loss", recording_loss)
        row = trainer.train_step(0)
        batch = seen["rollout"][2]
        return row, batch, torch.cat(seen["masks"])

    row, batch, used = one_step({"forking_token_fraction": 0.25})
    expected = forking_token_mask(batch.entropies, batch.response_mask, 0.25)
    assert torch.equal(used, expected) and used.sum() < batch.response_mask.sum()
    assert row["loss_token_fraction"] == pytest.approx(float(expected.sum() / batch.response_mask.sum()))
    row, batch, used = one_step({})
    assert torch.equal(used, batch.response_mask.bool()) and row["loss_token_fraction"] == 1.0


def test_each_step_reports_the_per_group_ess_and_capped_share_of_the_sequence_weights(rl_inputs, monkeypatch):
    """sequence_ess_fraction: per rollout group, the ESS of exp(sum_t log pi_train - log pi_behaviour) over its n
    responses as a share of n, averaged over groups (the premise probe's quantity, during training): below 1 for
    EAD's rollouts trained at tau = 1, exactly 1 for a fixed tau trained on its own logits / tau."""
    import logging

    import ead.rl.train as train
    from ead.metrics import ess_fraction

    def one_step(sampler):
        config = json.loads(json.dumps(CONFIG))
        config["rl"].update(prompts_per_step=2, max_new_tokens=24)
        config["rl"]["eval"].update(limit=4)
        trainer = train.Trainer(cell_settings(config, Cell("tiny", "dapo", sampler, 4, 0)),
                                str(rl_inputs / "policy"), str(rl_inputs / "countdown.parquet"),
                                logging.getLogger("test"))
        seen = {}
        rollout = trainer.rollout

        def recording_rollout(step):
            seen["rollout"] = rollout(step)
            return seen["rollout"]

        monkeypatch.setattr(trainer, "rollout", recording_rollout)
        return trainer.train_step(0), seen["rollout"]

    row, (_, _, batch, _, group_index) = one_step("ead_tis")
    valid = batch.response_mask.double()
    sequence_log_ratio = ((batch.target_logprobs.double() - batch.behaviour_logprobs.double()) * valid).sum(-1).numpy()
    expected = np.mean([ess_fraction(sequence_log_ratio[group_index == g]) for g in np.unique(group_index)])
    assert row["sequence_ess_fraction"] == pytest.approx(expected, rel=1e-4) and row["sequence_ess_fraction"] < 1
    assert 0 < row["tis_ess_fraction"] <= 1
    # the share of this step's sequences whose weight exp(sum of log-ratios) exceeds tis_cap (2.0)
    assert row["tis_capped_sequence_fraction"] == np.mean(sequence_log_ratio > np.log(2.0))
    row, _ = one_step("tau1.2")
    assert row["sequence_ess_fraction"] == 1.0 and row["tis_ess_fraction"] == pytest.approx(1.0)
    assert row["tis_capped_sequence_fraction"] == 0.0  # trained on its own logits / tau: every weight is 1


def annealed(settings, **training):
    """``settings`` trained at the annealed tau_t (the sampler's ``trains_at: annealed``), with other ``training``."""
    return dataclasses.replace(settings, training=dataclasses.replace(settings.training,
                                                                      **{"trains_at": "annealed", **training}))


def test_annealed_training_evaluates_old_and_new_policy_at_each_tokens_sampling_temperature(rl_inputs, monkeypatch):
    """trains_at annealed (the authors' unused old_policy_temperature_correction): the trainer's pi_theta log-probs are
    log_softmax(logits / tau_t)[y_t] per token, tau_t EAD's by hand (tau_max 1.2, tau_min 0.1, d_s = 25 + 5 s,
    decay_scale 1, no warm-up: the default profile's), pi_old is the sampler's behaviour log-prob at the same tau_t,
    and no importance weight enters the loss."""
    import copy
    import logging

    import ead.rl.train as train
    from ead.samplers.hf import response_logits

    config = json.loads(json.dumps(CONFIG))
    config["rl"].update(prompts_per_step=2, max_new_tokens=24)
    config["rl"]["eval"].update(limit=4)
    config["ead"].update(tau_max=1.2, tau_min=0.1, d0=25, step_factor=5, warmup=0, decay_scale=1)
    settings = annealed(cell_settings(config, Cell("tiny", "dapo", "ead", 4, 0)))
    trainer = train.Trainer(settings, str(rl_inputs / "policy"), str(rl_inputs / "countdown.parquet"),
                            logging.getLogger("test"))
    before = copy.deepcopy(trainer.model).eval()
    seen = {"losses": []}
    rollout, loss = trainer.rollout, train.policy_loss

    def recording_rollout(step):
        seen["rollout"] = rollout(step)
        return seen["rollout"]

    def recording_loss(config, **kwargs):
        seen["losses"].append(kwargs)
        return loss(config, **kwargs)

    monkeypatch.setattr(trainer, "rollout", recording_rollout)
    monkeypatch.setattr(train, "policy_loss", recording_loss)
    step = 3
    row = trainer.train_step(step)
    input_ids, attention_mask, batch, _, _ = seen["rollout"]
    length = batch.token_ids.shape[1]
    tau = np.maximum(2.2 - np.exp(np.arange(length) / (25 + 5 * step)), 0.1)  # EAD at step 3, by hand
    assert tau[0] == pytest.approx(1.2) and tau[-1] < 0.75  # the temperatures do differ along the response
    with torch.no_grad():
        logits = response_logits(before, input_ids, attention_mask, batch.token_ids, batch.response_mask)
    expected = torch.log_softmax(logits / torch.tensor(tau, dtype=logits.dtype)[None, :, None], dim=-1)
    expected = expected.gather(-1, batch.token_ids[..., None]).squeeze(-1)
    first = seen["losses"][0]  # the first mini-batch's log-probs come from the policy before any update
    rows = slice(0, first["log_prob"].shape[0])
    valid = batch.response_mask[rows]
    torch.testing.assert_close(first["log_prob"].detach()[valid], expected[rows][valid], rtol=0, atol=1e-5)
    at_tau_one = torch.log_softmax(logits, dim=-1).gather(-1, batch.token_ids[..., None]).squeeze(-1)
    assert (first["log_prob"].detach() - at_tau_one[rows])[valid].abs().max() > 0.05  # not tau = 1
    for kwargs in seen["losses"]:
        assert kwargs["rollout_is_weights"] is None
    old = torch.cat([kwargs["old_log_prob"] for kwargs in seen["losses"]])
    assert torch.equal(old, batch.behaviour_logprobs)  # pi_old = the sampler at tau_t, no recomputation at tau = 1
    torch.testing.assert_close(old[batch.response_mask], expected[batch.response_mask], rtol=0, atol=1e-5)
    assert row["train_temperature"] == pytest.approx(
        float((torch.tensor(tau)[None] * batch.response_mask).sum() / batch.response_mask.sum()))
    assert row["behaviour_target_log_ratio"] == 0.0 and row["tis_capped_sequence_fraction"] == 0.0


@pytest.mark.parametrize("changes, message", [
    ({"tis": "token"}, "every importance weight is 1; set tis: none"),
    ({"schedule": {"name": "entropy_aware"}}, "sets each token's temperature from the logits"),
    ({"trains_at": "sampled"}, r"trains_at must be one of \('behaviour', 'one', 'annealed'\)"),
])
def test_annealed_training_refuses_a_weight_or_a_logit_read_schedule(rl_inputs, changes, message):
    import logging

    from ead.rl.train import Trainer

    settings = annealed(cell_settings(CONFIG, Cell("tiny", "dapo", "ead", 4, 0)),
                        **{key: value for key, value in changes.items() if key != "schedule"})
    if "schedule" in changes:
        settings = dataclasses.replace(settings, schedule=changes["schedule"])
    with pytest.raises(ValueError, match=message):
        Trainer(settings, str(rl_inputs / "policy"), str(rl_inputs / "countdown.parquet"), logging.getLogger("test"))


def test_the_last_evaluation_with_the_cells_own_sampler_draws_the_declared_evaluations_random_numbers(rl_inputs):
    """rl.eval.own_sampler: a cell's own sampler is evaluated on the same problems with the same random numbers as the
    declared tau. So tau 1.0's own rows are its declared rows (reused, and equal to sampling them again), and EAD whose
    warm-up covers the whole response (tau = 1 throughout) reproduces them too."""
    import logging

    from ead.rl.train import Trainer

    def trainer(sampler, warmup=0):
        config = json.loads(json.dumps(CONFIG))
        config["rl"]["eval"].update(limit=4, n=4, batch_size=16, max_new_tokens=24)
        config["ead"]["warmup"] = warmup
        settings = cell_settings(config, Cell("tiny", "dapo", sampler, 4, 0))
        return Trainer(settings, str(rl_inputs / "policy"), str(rl_inputs / "countdown.parquet"),
                       logging.getLogger("test"))

    counts = ["problem_id", "num_samples", "num_correct"]
    fixed = trainer("tau1.0")
    declared, declared_failures = fixed.evaluate(2)
    reused, reused_failures = fixed.evaluate(2, own_sampler=True)
    assert (declared["evaluated_with"] == "eval_tau").all() and (reused["evaluated_with"] == "own_sampler").all()
    assert reused["greedy_correct"].isna().all() and declared["greedy_correct"].notna().all()
    pd.testing.assert_frame_equal(declared[counts], reused[counts])
    failures = ["problem_id", "failure", "num_samples"]
    assert (reused_failures["evaluated_with"] == "own_sampler").all()
    pd.testing.assert_frame_equal(declared_failures[failures], reused_failures[failures])
    fixed.declared_rows.clear()  # sampled again instead of reused: the same draws, the same counts
    again, again_failures = fixed.evaluate(2, own_sampler=True)
    pd.testing.assert_frame_equal(declared[counts], again[counts])
    pd.testing.assert_frame_equal(declared_failures[failures], again_failures[failures])

    warm = trainer("ead", warmup=100)  # tau = 1 at every position of a 24-token response
    pd.testing.assert_frame_equal(declared[counts], warm.evaluate(2, own_sampler=True)[0][counts])


def test_timeouts_are_counted_per_step_and_per_problem_and_fail_the_job_past_the_bound(rl_inputs, monkeypatch):
    """A timed-out answer scores 0 like a wrong one: the step row and the evaluation's per-problem rows count them,
    and a job whose share passes grader.max_timeout_share fails with a message."""
    import logging

    import ead.evaluation as evaluation
    import ead.rl.train as train
    from ead.rewards import Grade, TooManyTimeouts, configure_grader
    from ead.rewards import grade_many as real_grade_many

    def grade_with_timeouts(every):
        def grade_many(responses, references, task):
            grades = real_grade_many(responses, references, task)
            return [Grade(0.0, None, "timeout") if i % every == 0 else g for i, g in enumerate(grades)]
        return grade_many

    config = json.loads(json.dumps(CONFIG))
    config["rl"].update(prompts_per_step=2, max_new_tokens=24)
    config["rl"]["eval"].update(limit=4, n=4)
    configure_grader(max_timeout_share=0.5)
    try:
        trainer = train.Trainer(cell_settings(config, Cell("tiny", "dapo", "tau1.0", 4, 0)),
                                str(rl_inputs / "policy"), str(rl_inputs / "countdown.parquet"),
                                logging.getLogger("test"))
        monkeypatch.setattr(train, "grade_many", grade_with_timeouts(4))  # 2 of the 8 rollouts
        row = trainer.train_step(1)
        assert row["grader_timeouts"] == 2.0
        monkeypatch.setattr(evaluation, "grade_many", grade_with_timeouts(4))
        rows, _ = trainer.evaluate(1)
        # 16 samples (every 4th: the first of each problem) and 4 greedy answers (the first)
        assert rows["num_timeouts"].tolist() == [2.0, 1.0, 1.0, 1.0]
        monkeypatch.setattr(train, "grade_many", grade_with_timeouts(1))  # every rollout: 10 of 16 so far
        with pytest.raises(TooManyTimeouts, match=r"rollouts of steps 1-2: 10 of 16 answers \(62\.5%\) timed out"):
            trainer.train_step(2)
    finally:
        configure_grader()


def test_group_outcomes_count_informative_and_solved_groups():
    # groups of 4: all wrong, one right, all right, two right
    rewards = [0, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1, 0, 1, 1, 0]
    groups = [g for g in range(4) for _ in range(4)]
    informative, solved = group_outcomes(rewards, groups)
    assert informative == pytest.approx(2 / 4)  # 0 < correct < 4: groups 1 and 3
    assert solved == pytest.approx(3 / 4)       # a correct rollout: groups 1, 2 and 3
    assert group_outcomes([0.0, 0.0], [0, 1]) == (0.0, 0.0)


# --- a fixed training pool ------------------------------------------------------------------------------------------
def pool_settings(seed=0, pool=(6, 0), **rl):
    """A small cell whose prompts come from a fixed pool of ``pool`` = (size, seed) training problems (None: none)."""
    config = json.loads(json.dumps(CONFIG))
    config["rl"].update(steps=2, prompts_per_step=2, max_new_tokens=24, checkpoint_every=2,
                        train_pool=None if pool is None else {"size": pool[0], "seed": pool[1]}, **rl)
    config["rl"]["eval"].update(limit=4, n=4, every=1, batch_size=16, max_new_tokens=24)
    return cell_settings(config, Cell("tiny", "dapo", "tau1.0", 4, seed))


def test_a_fixed_training_pool_is_drawn_once_by_its_own_seed_and_every_steps_prompts_come_from_it(rl_inputs):
    """rl.train_pool: the pool depends on its seed alone (the same for every cell seed and step, so pool and held-out
    evaluations pair across seeds), and every prompt of every step is a pool problem; prompts recur across steps.
    Without a pool the prompts come from the whole train split, as before."""
    import logging

    from ead.rl.train import Trainer, training_pool

    def trainer(settings):
        return Trainer(settings, str(rl_inputs / "policy"), str(rl_inputs / "countdown.parquet"),
                       logging.getLogger("test"))

    pools = [trainer(pool_settings(seed=seed)) for seed in (0, 1, 2)]
    ids = list(pools[0].pool["id"])
    assert len(ids) == 6 == len(set(ids)) and set(ids) <= set(pools[0].train_problems["id"])
    assert all(list(t.pool["id"]) == ids for t in pools)
    assert list(training_pool(pools[0].train_problems, pools[0].settings.budget.train_pool)["id"]) == ids
    assert list(trainer(pool_settings(pool=(6, 1))).pool["id"]) != ids  # another pool seed, another pool

    tokenizer = pools[0].tokenizer
    pool_prompts = {tuple(encode_strict(tokenizer, q)) for q in pools[0].pool["question"]}
    seen = []
    for t in pools:
        for step in range(1, 7):
            input_ids, attention_mask, *_ = t.rollout(step)
            prompts = {tuple(row[mask.bool()].tolist()) for row, mask in zip(input_ids, attention_mask)}
            assert prompts <= pool_prompts and len(prompts) == 2
            seen.append(prompts)
    assert len(set().union(*seen)) <= 6 < sum(len(p) for p in seen)  # 36 draws of 6 problems: they recur

    free = trainer(pool_settings(pool=None))
    assert free.pool is None
    drawn = set()
    for step in range(1, 7):
        input_ids, attention_mask, *_ = free.rollout(step)
        drawn |= {tuple(row[mask.bool()].tolist()) for row, mask in zip(input_ids, attention_mask)}
    assert not drawn <= pool_prompts


def test_a_step_0_failure_table_that_misses_a_problem_fails_the_cell_before_it_trains(rl_inputs, tmp_path):
    from ead.rl.train import train

    failures = pd.read_csv(rl_inputs / "base_failures.csv")
    write_table(failures[failures["problem_id"] != failures["problem_id"].iloc[0]], tmp_path / "short.csv")
    with pytest.raises(SystemExit, match=r"short\.csv: its counts do not cover the step-0 evaluation's problems "
                                         r"with their samples \(3 problems counted, 4 evaluated\)"):
        train(small_cell_settings(), str(rl_inputs / "policy"), str(rl_inputs / "countdown.parquet"),
              str(rl_inputs / "base.csv"), str(tmp_path / "short.csv"), str(tmp_path / "out"), str(tmp_path / "ckpt"))
    assert not (tmp_path / "out").exists() and not (tmp_path / "ckpt").exists()  # nothing trained, nothing written


def test_a_pool_cell_evaluates_the_pool_at_every_evaluated_step_and_g4_reads_the_held_out_rows(rl_inputs, tmp_path):
    """Every evaluated step, step 0 included, has graded train_pool rows on exactly the pool's problems (declared tau,
    greedy too), beside the held-out eval_tau rows; the completeness check reads them, and G4
    (ead.claims.rl_learns) reads the held-out rows unless asked for the pool's."""
    from ead.claims.rl_learns import rl_learns_table
    from ead.rl.cells import read_eval_problems
    from ead.rl.train import train, training_pool

    settings = pool_settings()
    train(settings, str(rl_inputs / "policy"), str(rl_inputs / "countdown.parquet"), str(rl_inputs / "base.csv"),
          str(rl_inputs / "base_failures.csv"),
          str(tmp_path / "out"), str(tmp_path / "ckpt"))
    table = read_eval_problems([str(tmp_path / "out" / "eval_problems.csv")],
                               argparse.Namespace(expect_steps=2, eval_every=1, own_sampler=True))
    pool = table[table["evaluated_with"] == "train_pool"]
    held_out = table[table["evaluated_with"] == "eval_tau"]
    assert sorted(pool["step"].unique()) == sorted(held_out["step"].unique()) == [0, 1, 2]
    data = pd.read_parquet(rl_inputs / "countdown.parquet")
    expected = training_pool(data[data["split"] == "train"].reset_index(drop=True), settings.budget.train_pool)
    for _, rows in pool.groupby("step"):
        assert sorted(rows["problem_id"]) == sorted(expected["id"])
    assert (pool["num_samples"] == 4).all() and pool["greedy_correct"].notna().all()
    assert ((pool["num_correct"] >= 0) & (pool["num_correct"] <= pool["num_samples"])).all()
    assert not set(pool["problem_id"]) & set(held_out["problem_id"])
    # every evaluation's samples counted again by first mistake, beside its counts: one row per failure type and "ok",
    # summing to the problem's samples, "ok" its correct ones (the task's classifier agrees with its grader)
    failures = EVAL_FAILURES.read(tmp_path / "out" / "eval_failures.csv")
    assert set(failures["failure"]) == {"ok", *get_task("countdown").failure_types}
    by_problem = failures.pivot_table(index=["step", "evaluated_with", "problem_id"], columns="failure",
                                      values="num_samples", aggfunc="sum")
    counts = table.set_index(["step", "evaluated_with", "problem_id"]).loc[by_problem.index]
    assert by_problem.notna().all().all() and len(by_problem) == len(table)
    assert (by_problem.sum(axis=1) == counts["num_samples"]).all() and (by_problem["ok"] == counts["num_correct"]).all()

    learns = dict(sampler="tau1.0", metric="pass@1", min_effect=0.08, min_ci_low=0.05, resamples=50, seed=0)
    g4 = rl_learns_table(table, **learns).iloc[0]
    assert g4["num_problems"] == 4 and "training pool" not in g4["part"]
    held_out_only = rl_learns_table(table[table["evaluated_with"] != "train_pool"], **learns).iloc[0]
    assert g4["effect"] == held_out_only["effect"]
    on_pool = rl_learns_table(table, **learns, evaluated_with="train_pool").iloc[0]
    assert on_pool["num_problems"] == 6 and on_pool["part"].endswith("(training pool)")

    cut = table[~((table["evaluated_with"] == "train_pool") & (table["step"] == 1))]
    write_table(cut, tmp_path / "cut.csv")
    with pytest.raises(ValueError, match=r"evaluated_with=train_pool.*no row for step 1"):
        read_eval_problems([str(tmp_path / "cut.csv")],
                           argparse.Namespace(expect_steps=2, eval_every=1, own_sampler=True))
