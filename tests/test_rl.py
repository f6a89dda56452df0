"""RL backend: TIS weights, verl's loss modes, trainer log-probs, the grid, aggregation, and kill-and-resume."""

import dataclasses
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from ead.data.countdown import generate_countdown
from ead.io import write_table
from ead.metrics import pass_at_k, two_way_bootstrap_mean_ci, verl_best_at_k
from ead.models import save_hf_model
from ead.models.tiny_policy import TinyPolicyShape, build_model, build_tokenizer, encode_strict
from ead.rl.aggregate import eval_curves
from ead.rl.losses import actor_config, forking_token_mask, grpo_advantages, policy_loss, tis_weights
from ead.rl.train import response_log_probs
from ead.samplers.hf import left_pad, sample
from ead.schedule import AnnealedSchedule, FixedTemperature
from ead.settings import ConfigError, validate_config
from ead.settings.layering import load_layered_config
from ead.settings.rl import Cell, cell_settings, expand_grid, learning_rate
from tests.conftest import LOGIT_ATOL, log_prob_tolerance, recorded_logits, sampled_logits

ROOT = Path(__file__).resolve().parents[1]
CONFIG = load_layered_config(ROOT / "configs" / "config.yaml")
SCHEMA = ROOT / "workflow" / "schemas" / "config.schema.yaml"


# --- TIS --------------------------------------------------------------------------------------------------------
def constructed_log_probs():
    old = torch.tensor([[-0.1, -2.0, -0.5, -3.0], [-1.0, -0.2, -40.0, 0.0]], dtype=torch.float32)
    behaviour = torch.tensor([[-0.9, -1.0, -0.5, -0.1], [-0.3, -60.0, -0.1, 0.0]], dtype=torch.float32)
    mask = torch.tensor([[1, 1, 1, 1], [1, 1, 1, 0]], dtype=torch.float32)
    return old, behaviour, mask


def test_token_tis_weight_is_the_truncated_ratio_of_each_token():
    old, behaviour, mask = constructed_log_probs()
    result = tis_weights(old, behaviour, mask, level="token", cap=2.0)
    expected = torch.minimum(torch.exp(old.double() - behaviour.double()), torch.tensor(2.0, dtype=torch.float64))
    valid = mask.bool()
    torch.testing.assert_close(result.weights[valid].double(), expected[valid], rtol=1e-6, atol=1e-7)
    assert torch.all(result.weights[~valid] == 0)
    assert torch.isfinite(result.weights).all()  # a log-ratio of +59.8 is clamped before exp, never inf
    raw = torch.exp(old.double() - behaviour.double())[valid]
    assert result.capped_fraction == pytest.approx(float((raw > 2.0).double().mean()))
    assert result.max == 2.0 and result.mean == pytest.approx(float(expected[valid].mean()), rel=1e-6)


def test_sequence_tis_weight_is_the_truncated_product_over_the_sequence():
    old, behaviour, mask = constructed_log_probs()
    result = tis_weights(old, behaviour, mask, level="sequence", cap=2.0)
    for row in range(2):
        valid = mask[row].bool()
        log_ratio = float((old[row][valid].double() - behaviour[row][valid].double()).sum())
        expected = min(np.exp(min(log_ratio, 20.0)), 2.0)
        assert torch.allclose(result.weights[row][valid].double(), torch.tensor(expected, dtype=torch.float64))
        assert torch.all(result.weights[row][~valid] == 0)
    assert result.capped_fraction == 0.5  # row 0 sums to +0.2 (weight 1.22), row 1 to +79.1 (capped)


def test_tis_ess_is_verls_effective_sample_size_of_the_truncated_weights():
    """(mean w)^2 / mean(w^2) over the valid tokens' truncated weights (verl's rollout_is_eff_sample_size): 1 when
    every weight is equal, lower as a few tokens carry the weight."""
    old, behaviour, mask = constructed_log_probs()
    for level in ("token", "sequence"):
        result = tis_weights(old, behaviour, mask, level=level, cap=2.0)
        w = result.weights[mask.bool()].double()
        assert result.ess_fraction == pytest.approx(float(w.mean() ** 2 / (w ** 2).mean()), rel=1e-5)
        assert 0 < result.ess_fraction < 1
    on_policy = tis_weights(old, old, mask, level="token", cap=2.0)
    assert on_policy.ess_fraction == pytest.approx(1.0)


def test_tis_off_reports_statistics_but_no_weights():
    old, behaviour, mask = constructed_log_probs()
    result = tis_weights(old, behaviour, mask, level="none", cap=2.0)
    assert result.weights is None and result.max == 2.0
    with pytest.raises(ValueError, match="TIS level must be one of"):
        tis_weights(old, behaviour, mask, level="tokens", cap=2.0)


def test_capped_sequence_fraction_counts_sequences_whose_product_weight_exceeds_the_cap():
    """Hand-made log-ratios (log pi_old - log pi_behaviour) with cap 2 (log 2 = 0.693): the share of sequences, over
    rows with a valid token, whose summed log-ratio exceeds log 2, whatever the TIS level."""
    old = torch.tensor([
        [0.5, 0.6, 0.0, 0.0],    # sums to 1.1 > 0.693: weight e^1.1 = 3.0, capped
        [0.2, 0.1, 0.1, 0.0],    # 0.4: weight 1.49, not capped
        [3.0, -3.0, 0.0, 0.0],   # 0.0: a token is far above the cap, the sequence is not
        [0.3, 0.3, 9.0, 9.0],    # 0.6 over its valid tokens (the 9s are padding): not capped
        [5.0, 5.0, 5.0, 5.0],    # no valid token: not a sequence
    ])
    behaviour = torch.zeros_like(old)
    mask = torch.tensor([[1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 0, 0], [1, 1, 0, 0], [0, 0, 0, 0]])
    for level in ("none", "token", "sequence"):
        assert tis_weights(old, behaviour, mask, level=level, cap=2.0).capped_sequence_fraction == 0.25, level
    # token level counts tokens: 3.0 of row 2 is the one valid token above log 2 (of 12 valid tokens)
    assert tis_weights(old, behaviour, mask, level="token", cap=2.0).capped_fraction == pytest.approx(1 / 12)
    # a larger cap: e^1.1 = 3.004 > 3, so the first row is still capped at 3; none at 3.1
    assert tis_weights(old, behaviour, mask, level="token", cap=3.0).capped_sequence_fraction == 0.25
    assert tis_weights(old, behaviour, mask, level="token", cap=3.1).capped_sequence_fraction == 0.0
    # rows 0 and 1 with three of four sequences above the cap
    heavy = torch.tensor([[1.0, 1.0], [0.7, 0.0], [-1.0, 0.0], [2.0, -0.5]])
    assert tis_weights(heavy, torch.zeros_like(heavy), torch.ones_like(heavy), level="none",
                       cap=2.0).capped_sequence_fraction == 0.75


def test_capped_sequence_fraction_is_verls_sequence_level_high_fraction():
    """The verl backend reads this column from verl's rollout_is_ratio_fraction_high at rollout_is=sequence: the same
    number when every row has a valid token (verl counts every row)."""
    from verl.trainer.ppo.rollout_corr_helper import compute_rollout_correction_weights

    generator = torch.Generator().manual_seed(4)
    old = -torch.rand(64, 10, generator=generator) * 2
    behaviour = old - 0.15 * torch.randn(64, 10, generator=generator)
    mask = (torch.arange(10)[None, :] < torch.randint(1, 11, (64, 1), generator=generator)).float()
    ours = tis_weights(old, behaviour, mask, level="token", cap=2.0).capped_sequence_fraction
    _, metrics = compute_rollout_correction_weights((old - behaviour) * mask, mask, rollout_is="sequence",
                                                    rollout_is_threshold=2.0)
    assert 0 < ours < 1 and ours == pytest.approx(metrics["rollout_is_ratio_fraction_high"], abs=1e-12)


# --- losses are verl's --------------------------------------------------------------------------------------------
def loss_inputs(seed=0, batch=8, length=6):
    generator = torch.Generator().manual_seed(seed)
    old = -torch.rand(batch, length, generator=generator) * 3
    log_prob = (old + 0.4 * torch.randn(batch, length, generator=generator)).requires_grad_()
    ref = old + 0.1 * torch.randn(batch, length, generator=generator)
    rewards = (torch.rand(batch, generator=generator) > 0.5).float()
    mask = torch.ones(batch, length)
    mask[0, 4:] = 0
    mask[3, 2:] = 0
    advantages = grpo_advantages(rewards, mask, np.repeat(np.arange(batch // 4), 4))
    weights = torch.rand(batch, length, generator=generator) * 2
    return old, log_prob, ref, advantages, mask, weights


@pytest.mark.parametrize("name", ["dapo", "grpo", "clip_cov", "kl_cov"])
def test_each_algorithm_is_verls_policy_loss_called_directly(name):
    from verl.trainer.ppo import core_algos

    algorithm = CONFIG["rl"]["algorithms"][name]
    config = actor_config(algorithm, rollout_n=4, mini_batch_size=8)
    old, log_prob, ref, advantages, mask, weights = loss_inputs()
    torch.manual_seed(5)
    ours, metrics = policy_loss(config, old_log_prob=old, log_prob=log_prob, advantages=advantages,
                                response_mask=mask, rollout_is_weights=weights, ref_log_prob=ref)
    direct_fn = {"vanilla": core_algos.compute_policy_loss_vanilla, "clip_cov": core_algos.compute_policy_loss_clip_cov,
                 "kl_cov": core_algos.compute_policy_loss_kl_cov}[algorithm["loss_mode"]]
    torch.manual_seed(5)
    direct, direct_metrics = direct_fn(old, log_prob, advantages, mask.bool(), algorithm["loss_agg_mode"], config,
                                       rollout_is_weights=weights)
    if algorithm["use_kl_loss"]:
        kl = core_algos.agg_loss(core_algos.kl_penalty(log_prob, ref, algorithm["kl_loss_type"]), mask.bool(),
                                 algorithm["loss_agg_mode"])
        direct = direct + algorithm["kl_loss_coef"] * kl
    torch.testing.assert_close(ours, direct)
    assert {k: v for k, v in metrics.items() if k in direct_metrics} == direct_metrics
    ours.backward()
    assert torch.isfinite(log_prob.grad).all() and log_prob.grad[mask == 0].abs().sum() == 0


@pytest.mark.parametrize("fraction", [0.2, 0.5, 1.0])
def test_forking_token_mask_keeps_the_highest_entropy_share_of_each_response(fraction):
    generator = torch.Generator().manual_seed(3)
    entropies = torch.round(torch.rand(6, 9, generator=generator) * 4) / 4  # coarse values: many ties
    lengths = torch.tensor([9, 1, 4, 7, 2, 5])
    valid = torch.arange(9)[None, :] < lengths[:, None]
    kept = forking_token_mask(entropies, valid, fraction)
    assert not (kept & ~valid).any()  # padding is never kept
    for row in range(6):
        count = math.ceil(fraction * int(lengths[row]))
        assert int(kept[row].sum()) == count  # exactly ceil(q x length), ties included
        chosen, dropped = entropies[row][kept[row]], entropies[row][valid[row] & ~kept[row]]
        assert dropped.numel() == 0 or chosen.min() >= dropped.max()
        # brute force: the kept positions are the first `count` of a stable descending sort of the valid tokens
        order = sorted(range(int(lengths[row])), key=lambda t: -float(entropies[row, t]))[:count]
        assert sorted(order) == torch.nonzero(kept[row]).flatten().tolist()


def test_forking_token_mask_over_the_batch_takes_the_global_entropy_quantile():
    entropies = torch.tensor([[0.9, 0.1, 0.8, 0.0], [0.2, 0.3, 0.95, 0.7]])
    valid = torch.tensor([[1, 1, 1, 0], [1, 1, 1, 1]], dtype=torch.bool)
    kept = forking_token_mask(entropies, valid, 0.5, scope="batch")  # 7 valid tokens: ceil(3.5) = 4 kept
    assert kept.tolist() == [[True, False, True, False], [False, False, True, True]]
    one_response_may_keep_nothing = forking_token_mask(entropies, valid, 0.2, scope="batch")
    assert one_response_may_keep_nothing.tolist() == [[True, False, False, False], [False, False, True, False]]
    with pytest.raises(ValueError, match="forking_token_fraction must be in"):
        forking_token_mask(entropies, valid, 0.0)
    with pytest.raises(ValueError, match="forking_token_scope must be one of"):
        forking_token_mask(entropies, valid, 0.5, scope="prompt")


def test_algorithm_configs_carry_the_papers_settings():
    algorithms = CONFIG["rl"]["algorithms"]
    dapo = actor_config(algorithms["dapo"], 8, 64)
    assert (dapo.policy_loss.loss_mode, dapo.clip_ratio_low, dapo.clip_ratio_high, dapo.loss_agg_mode,
            dapo.use_kl_loss) == ("vanilla", 0.2, 0.28, "token-mean", False)
    grpo = actor_config(algorithms["grpo"], 8, 64)
    assert (grpo.clip_ratio_low, grpo.clip_ratio_high, grpo.use_kl_loss, grpo.kl_loss_coef, grpo.kl_loss_type) == (
        0.2, 0.2, True, 0.001, "low_var_kl")
    clip_cov = actor_config(algorithms["clip_cov"], 8, 64)
    assert (clip_cov.policy_loss.loss_mode, clip_cov.policy_loss.clip_cov_ratio, clip_cov.policy_loss.clip_cov_lb,
            clip_cov.policy_loss.clip_cov_ub) == ("clip_cov", 0.0002, 1.0, 5.0)
    kl_cov = actor_config(algorithms["kl_cov"], 8, 64)
    assert (kl_cov.policy_loss.kl_cov_ratio, kl_cov.policy_loss.ppo_kl_coef) == (0.002, 1.0)
    with pytest.raises(ValueError, match=r"unknown algorithm keys \['clip_ratio'\]"):
        actor_config({**algorithms["dapo"], "clip_ratio": 0.3}, 8, 64)


def test_grpo_advantage_is_the_group_normalised_reward_on_every_response_token():
    rewards = torch.tensor([1.0, 0.0, 0.0, 0.0, 1.0, 1.0])
    mask = torch.tensor([[1, 1, 0], [1, 1, 1], [1, 0, 0], [1, 1, 1], [1, 1, 1], [1, 1, 0]], dtype=torch.float32)
    advantages = grpo_advantages(rewards, mask, np.array([0, 0, 0, 1, 1, 1]))
    group = torch.tensor([1.0, 0.0, 0.0])
    expected_first = (1.0 - group.mean()) / (group.std() + 1e-6)
    assert torch.allclose(advantages[0, :2], expected_first.expand(2))
    assert torch.all(advantages[mask == 0] == 0)
    assert torch.allclose(advantages[3:].sum(-1) / mask[3:].sum(-1), (torch.tensor([0.0, 1, 1]) - 2 / 3)
                          / (torch.tensor([0.0, 1, 1]).std() + 1e-6))


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


# --- grid and config ------------------------------------------------------------------------------------------------
def test_grid_is_the_deduplicated_union_of_experiments_with_lr_by_n():
    rl = CONFIG["rl"]
    cells = expand_grid(rl)
    assert len(cells) == len(set(cells))
    main = expand_grid(rl, ["main"])
    assert len(main) == 2 * 5 * 1  # policies x samplers x seeds
    replicate = expand_grid(rl, ["main_replicate"])  # the sharpened policy's second seed of main
    assert {(c.policy, c.seed) for c in replicate} == {("tiny1m_sharp", 1)} and len(replicate) == 5
    shared = Cell("tiny1m_sharp", "dapo", "tau1.0", 8, 0)
    assert shared in main and shared in expand_grid(rl, ["rollout_scaling"])
    assert [learning_rate(rl, n) for n in (4, 8, 16)] == [2.5e-5, 5.0e-5, 1.0e-4]
    settings = cell_settings(CONFIG, Cell("tiny1m", "dapo", "ead_tmin0.8", 8, 1))
    assert settings.schedule == {"name": "ead", **CONFIG["ead"], "tau_min": 0.8}
    assert settings.training.lr == 5.0e-5 and settings.training.tis == "none"
    assert cell_settings(CONFIG, Cell("tiny1m", "dapo", "ead_tis", 8, 0)).training.tis == "token"
    assert cell_settings(CONFIG, Cell("tiny1m", "dapo", "tau0.6", 8, 0)).schedule == {"name": "fixed", "tau": 0.6}
    # a policy's rl_lr_scale multiplies the lr-by-n rule (the sharpened policy: by its sharpening temperature)
    sharp = CONFIG["policies"]["tiny1m_sharp"]
    assert sharp["rl_lr_scale"] == sharp["sharpen"]["temperature"]
    assert cell_settings(CONFIG, shared).training.lr == pytest.approx(5.0e-5 * sharp["rl_lr_scale"])


def test_reported_ks_are_the_powers_of_two_up_to_n_and_n():
    from ead.settings.rl import reported_ks

    assert reported_ks(16) == [1, 2, 4, 8, 16] and reported_ks(12) == [1, 2, 4, 8, 12] and reported_ks(1) == [1]


def with_rl(path, value):
    config = json.loads(json.dumps(CONFIG))
    target = config["rl"]
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return config


@pytest.mark.parametrize("path, value, message", [
    (("experiments", "main", "samplers"), ["tau0.6", "tau0.7"],
     r"rl\.experiments\.main\.samplers = \['tau0\.7'\]: not defined; known samplers"),
    (("experiments", "main", "policies"), ["tiny2m"], r"rl\.experiments\.main\.policies = \['tiny2m'\]: not defined"),
    (("experiments", "main", "n"), [32], r"rl\.experiments\.main\.n = 32 has no learning rate in rl\.lr_by_n"),
    (("samplers", "hot"), {"name": "fixed", "tau": 0}, r"rl\.samplers\.hot: fixed schedule: tau must be > 0"),
    (("samplers", "bad_ead"), {"name": "ead", "tau_min": 1.5}, r"rl\.samplers\.bad_ead: ead schedule: .*tau_min"),
    (("eval", "n"), 8, r"rl\.eval\.n = 8 must be >= every k in rl\.eval\.k"),
    (("mini_batches",), 3, r"rl\.mini_batches = 3 equal mini-batches"),
    (("fixed_tau_trains_at",), "logits", r"rl\.fixed_tau_trains_at"),
])
def test_rl_config_errors_name_the_key_and_value(path, value, message):
    with pytest.raises(ConfigError, match=message):
        validate_config(with_rl(path, value), SCHEMA)


def test_an_own_sampler_claim_needs_the_own_sampler_evaluation_and_an_evaluation_metric():
    own = [claim for claim in CONFIG["claims"] if claim.get("evaluated_with") == "own_sampler"]
    assert own and CONFIG["rl"]["eval"]["own_sampler"]
    config = with_rl(("eval", "own_sampler"), False)
    with pytest.raises(ConfigError, match=rf"claims\[\d+\] \({own[0]['id']}\)\.evaluated_with = 'own_sampler' needs "
                                          r"rl\.eval\.own_sampler: true"):
        validate_config(config, SCHEMA)
    config = json.loads(json.dumps(CONFIG))
    config["claims"] = [{**own[0], "metric": "entropy"}]
    with pytest.raises(ConfigError, match=r"'entropy' is a training metric"):
        validate_config(config, SCHEMA)


# --- aggregation --------------------------------------------------------------------------------------------------
def test_two_way_bootstrap_matches_explicit_resampling():
    matrix = np.random.default_rng(0).random((3, 7))
    mean, low, high = two_way_bootstrap_mean_ci(matrix, resamples=200, seed=4)
    rng = np.random.default_rng(4)
    seed_draws = [rng.integers(0, 3, 3) for _ in range(200)]
    problem_draws = [rng.integers(0, 7, 7) for _ in range(200)]
    means = [matrix[np.ix_(s, p)].mean() for s, p in zip(seed_draws, problem_draws)]
    assert mean == pytest.approx(matrix.mean())
    assert (low, high) == pytest.approx((np.quantile(means, 0.025), np.quantile(means, 0.975)))


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
    return root


def train_command(root, out, checkpoint, settings):
    """The job's command line, with --k: a direct call with k also writes eval.csv (the workflow's cells leave it to
    ead.rl.cell_eval)."""
    return [sys.executable, "-m", "ead.rl.train", "--policy-dir", str(root / "policy"),
            "--data", str(root / "countdown.parquet"), "--base-eval", str(root / "base.csv"),
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
    for name in ("steps", "eval", "eval_problems"):
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


def test_cell_eval_summarises_the_counts_for_any_k_up_to_n():
    from ead.metrics import pass_worst_summary
    from ead.rl.cell_eval import cell_summary

    problems = pd.DataFrame({"step": [0, 0, 2, 2], "evaluated_with": "eval_tau", "problem_id": ["a", "b", "a", "b"],
                             "num_samples": [4] * 4,
                             "num_correct": [1, 0, 4, 2], "greedy_correct": [1.0, 0.0, 1.0, 1.0],
                             "policy": "tiny1m", "sampler": "ead"})
    for ks in ([1, 4], [2]):
        summary = cell_summary(problems, ks, seed=3)
        for step, group in problems.groupby("step"):
            expected = pass_worst_summary(group, ks, seed=3)
            got = summary[summary.step == step].reset_index(drop=True)
            pd.testing.assert_frame_equal(got[expected.columns], expected)
        assert set(summary.policy) == {"tiny1m"} and set(summary.sampler) == {"ead"}
    with pytest.raises(ValueError, match="k = 8 exceeds the 4 samples"):
        cell_summary(problems, [1, 8], seed=3)


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
    declared = fixed.evaluate(2)
    reused = fixed.evaluate(2, own_sampler=True)
    assert (declared["evaluated_with"] == "eval_tau").all() and (reused["evaluated_with"] == "own_sampler").all()
    assert reused["greedy_correct"].isna().all() and declared["greedy_correct"].notna().all()
    pd.testing.assert_frame_equal(declared[counts], reused[counts])
    fixed.declared_rows.clear()  # sampled again instead of reused: the same draws, the same counts
    pd.testing.assert_frame_equal(declared[counts], fixed.evaluate(2, own_sampler=True)[counts])

    warm = trainer("ead", warmup=100)  # tau = 1 at every position of a 24-token response
    pd.testing.assert_frame_equal(declared[counts], warm.evaluate(2, own_sampler=True)[counts])


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
        rows = trainer.evaluate(1)
        # 16 samples (every 4th: the first of each problem) and 4 greedy answers (the first)
        assert rows["num_timeouts"].tolist() == [2.0, 1.0, 1.0, 1.0]
        monkeypatch.setattr(train, "grade_many", grade_with_timeouts(1))  # every rollout: 10 of 16 so far
        with pytest.raises(TooManyTimeouts, match=r"rollouts of steps 1-2: 10 of 16 answers \(62\.5%\) timed out"):
            trainer.train_step(2)
    finally:
        configure_grader()
