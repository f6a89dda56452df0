"""Advantages, policy losses and truncated importance sampling, all from verl's own code.

Nothing here re-implements an RL loss: GRPO advantages are `core_algos.compute_grpo_outcome_advantage`, the
policy losses come from verl's registry (`get_policy_loss_fn(loss_mode)`: vanilla for DAPO/GRPO, clip_cov /
kl_cov for EntropyMech), the KL loss is `kl_penalty` + `agg_loss`, and the TIS weights are verl's
`compute_rollout_correction_weights` (log-space ratios, clamped, then truncated at the cap). This module only
composes them the way verl's actor does (`verl.workers.utils.losses.ppo_loss`): pg loss, + kl_loss_coef * KL.

One option is not verl's: forking-token training (`forking_token_fraction` q of an algorithm entry, after Wang et
al. 2025, "Beyond the 80/20 rule"), which keeps the policy gradient on the q highest-entropy tokens only. It is a
mask: the same verl loss is computed on fewer tokens (`forking_token_mask`); verl 0.9.1 has no such mask, so the
verl backend refuses the option by name.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from ead.settings.algorithms import ACTOR_KEYS, ALGORITHM_KEYS, FORKING_KEYS, POLICY_LOSS_KEYS

FORKING_SCOPES = ("response", "batch")
TIS_LEVELS = ("none", "token", "sequence")


def actor_config(algorithm: dict, rollout_n: int, mini_batch_size: int):
    """verl's `ActorConfig` for one algorithm entry of `rl.algorithms` (unknown keys are an error)."""
    from verl.workers.config.actor import ActorConfig, PolicyLossConfig

    unknown = sorted(set(algorithm) - ALGORITHM_KEYS - set(FORKING_KEYS))
    if unknown:
        raise ValueError(f"unknown algorithm keys {unknown}; known: {sorted(ALGORITHM_KEYS | set(FORKING_KEYS))}")
    policy_loss = PolicyLossConfig(loss_mode=algorithm["loss_mode"],
                                   **{key: algorithm[key] for key in POLICY_LOSS_KEYS if key in algorithm})
    actor_keys = {key: algorithm[key] for key in ACTOR_KEYS if key in algorithm}
    return ActorConfig(strategy="fsdp", rollout_n=rollout_n, ppo_mini_batch_size=mini_batch_size,
                       ppo_micro_batch_size_per_gpu=mini_batch_size, policy_loss=policy_loss, **actor_keys)


def grpo_advantages(rewards: torch.Tensor, response_mask: torch.Tensor, group_index: np.ndarray) -> torch.Tensor:
    """GRPO outcome advantages (verl): reward at the last response token, normalised within each prompt's group."""
    from verl.trainer.ppo.core_algos import compute_grpo_outcome_advantage

    mask = response_mask.to(torch.float32)
    last = (mask.cumsum(-1) == mask.sum(-1, keepdim=True)) & (mask > 0)
    token_level_rewards = torch.where(last, rewards[:, None].to(torch.float32), 0.0)
    advantages, _ = compute_grpo_outcome_advantage(token_level_rewards, mask, np.asarray(group_index))
    return advantages


def forking_token_mask(entropies: torch.Tensor, response_mask: torch.Tensor, fraction: float,
                       scope: str = "response") -> torch.Tensor:
    """The tokens the policy gradient keeps under forking-token training: the top ``fraction`` of valid tokens by
    the policy's entropy, per response (``scope="response"``: ceil(fraction x length) tokens of each response, so
    every response keeps at least one) or over the whole batch (``"batch"``: the entropy quantile of all valid
    tokens, the 80/20 paper's reading). Ties at the cut are broken by position (earlier first), so the count is
    exact. ``fraction`` 1 keeps every valid token."""
    if not 0 < fraction <= 1:
        raise ValueError(f"forking_token_fraction must be in (0, 1], got {fraction}")
    if scope not in FORKING_SCOPES:
        raise ValueError(f"forking_token_scope must be one of {FORKING_SCOPES}, got {scope!r}")
    valid = response_mask.bool()
    if fraction == 1:
        return valid
    # rank valid tokens by entropy (descending), earlier positions first among equal entropies
    score = torch.where(valid, entropies.to(torch.float64), -torch.inf)
    if scope == "response":
        keep_counts = torch.ceil(valid.sum(-1) * fraction).long()
        order = torch.sort(score, dim=-1, descending=True, stable=True).indices
        ranks = torch.empty_like(order)
        ranks.scatter_(-1, order, torch.arange(score.shape[-1]).expand_as(order).contiguous())
        return valid & (ranks < keep_counts[:, None])
    flat = score.flatten()
    keep = int(torch.ceil(valid.sum() * fraction))
    order = torch.sort(flat, descending=True, stable=True).indices[:keep]
    selected = torch.zeros_like(flat, dtype=torch.bool)
    selected[order] = True
    return (selected.view_as(valid) & valid)


@dataclass
class TISWeights:
    weights: torch.Tensor | None  # (batch, length), detached; None when TIS is off
    mean: float
    max: float
    capped_fraction: float  # valid tokens (token level) or sequences (sequence level) whose raw weight > cap
    ess_fraction: float  # verl's rollout_is_eff_sample_size: ESS of the truncated weights over the batch's tokens, / n
    capped_sequence_fraction: float  # sequences whose sequence weight exp(sum of log-ratios) > cap, at every level


def tis_weights(old_log_prob: torch.Tensor, behaviour_log_prob: torch.Tensor, response_mask: torch.Tensor, *,
                level: str, cap: float) -> TISWeights:
    """min(exp(log pi_old - log pi_behaviour), cap) per token, or per sequence (exp of the summed log-ratio).

    verl's `compute_rollout_correction_weights` does the work (log space, clamped before exp). Statistics are
    reported for "none" too (as the weights would be), so runs without TIS show how off-policy they are.
    """
    from verl.trainer.ppo.rollout_corr_helper import compute_rollout_correction_weights

    if level not in TIS_LEVELS:
        raise ValueError(f"TIS level must be one of {TIS_LEVELS}, got {level!r}")
    mask = response_mask.to(torch.float32)
    log_ratio = (old_log_prob - behaviour_log_prob) * mask
    statistic_level = "token" if level == "none" else level
    weights, verl_metrics = compute_rollout_correction_weights(log_ratio, mask, rollout_is=statistic_level,
                                                               rollout_is_threshold=cap)
    valid = mask.bool()
    if statistic_level == "sequence":
        rows = valid.any(-1)
        raw = torch.exp(torch.clamp(log_ratio.sum(-1), max=20.0))[rows]
        capped = float((raw > cap).float().mean()) if rows.any() else 0.0
        values = weights[:, 0][rows] if weights.shape[1] else weights.new_zeros(0)
    else:
        raw = torch.exp(torch.clamp(log_ratio, max=20.0))[valid]
        capped = float((raw > cap).float().mean()) if valid.any() else 0.0
        values = weights[valid]
    mean = float(values.mean()) if values.numel() else 1.0
    maximum = float(values.max()) if values.numel() else 1.0
    return TISWeights(None if level == "none" else weights, mean, maximum, capped,
                      float(verl_metrics["rollout_is_eff_sample_size"]),
                      capped_sequence_fraction(log_ratio, mask, cap))


def capped_sequence_fraction(log_ratio: torch.Tensor, response_mask: torch.Tensor, cap: float) -> float:
    """Share of the sequences (rows with a valid token) whose sequence importance weight pi_old(y) / pi_behaviour(y) =
    exp(sum_t log-ratio) exceeds ``cap``: what the revised paper's "fewer than 1% of sequences hit the truncation
    threshold" counts. Compared in log space, as verl's ``rollout_is_ratio_fraction_high`` does at sequence level (the
    same number there), so a weight too large for float never decides it; at any TIS level, so that token-level and
    uncorrected runs report it too."""
    mask = response_mask.to(torch.float32)
    rows = mask.sum(-1) > 0
    if not rows.any():
        return 0.0
    sequence_log_ratio = (log_ratio.to(torch.float64) * mask).sum(-1)[rows]
    return float((sequence_log_ratio > math.log(cap)).to(torch.float64).mean())


def policy_loss(config, *, old_log_prob: torch.Tensor, log_prob: torch.Tensor, advantages: torch.Tensor,
                response_mask: torch.Tensor, rollout_is_weights: torch.Tensor | None = None,
                ref_log_prob: torch.Tensor | None = None) -> tuple[torch.Tensor, dict]:
    """The actor loss of verl's `ppo_loss`: policy loss by loss_mode (+ kl_loss_coef * KL when use_kl_loss)."""
    from verl.trainer.ppo.core_algos import agg_loss, get_policy_loss_fn, kl_penalty

    mask = response_mask.bool()
    loss_fn = get_policy_loss_fn(config.policy_loss.loss_mode)
    loss, metrics = loss_fn(old_log_prob=old_log_prob, log_prob=log_prob, advantages=advantages, response_mask=mask,
                            loss_agg_mode=config.loss_agg_mode, config=config, rollout_is_weights=rollout_is_weights)
    metrics = dict(metrics)
    metrics["actor/pg_loss"] = float(loss.detach())
    if config.use_kl_loss:
        if ref_log_prob is None:
            raise ValueError("use_kl_loss is set but no reference log-probs were given")
        kld = kl_penalty(logprob=log_prob, ref_logprob=ref_log_prob, kl_penalty=config.kl_loss_type)
        kl_loss = agg_loss(loss_mat=kld, loss_mask=mask, loss_agg_mode=config.loss_agg_mode)
        loss = loss + kl_loss * config.kl_loss_coef
        metrics["actor/kl_loss"] = float(kl_loss.detach())
    return loss, metrics
