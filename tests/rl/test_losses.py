"""Advantages, policy losses and TIS (ead.rl.losses) against verl's core_algos and hand computations."""

import math
from pathlib import Path

import numpy as np
import pytest
import torch

from ead.rl.losses import actor_config, forking_token_mask, grpo_advantages, policy_loss, tis_weights
from tests.conftest import CONFIG

ROOT = Path(__file__).resolve().parents[2]


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
