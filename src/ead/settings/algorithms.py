"""``rl.algorithms``: the keys an RL algorithm document holds (verl's actor and policy-loss fields, the CPU backend's
forking-token mask) and the rule that checks one. The one home of these key sets: the CPU losses
(:mod:`ead.rl.losses`) and the verl overrides (:mod:`ead.rl.verl.overrides`) read them from here.
"""

from __future__ import annotations

from ead.settings.base import ConfigError

#: Policy-loss parameters (verl's PolicyLossConfig fields) each loss mode needs stated in the config, not left to
#: verl's defaults.
POLICY_LOSS_NEEDS = {
    "clip_cov": ("clip_cov_ratio", "clip_cov_lb", "clip_cov_ub"),
    "kl_cov": ("kl_cov_ratio", "ppo_kl_coef"),
}
POLICY_LOSS_KEYS = tuple(key for keys in POLICY_LOSS_NEEDS.values() for key in keys)
#: Algorithm keys that are fields of verl's ActorConfig.
ACTOR_KEYS = ("clip_ratio_low", "clip_ratio_high", "loss_agg_mode", "use_kl_loss", "kl_loss_coef", "kl_loss_type")
ALGORITHM_KEYS = frozenset({"loss_mode", *ACTOR_KEYS, *POLICY_LOSS_KEYS})
#: Algorithm keys of the CPU backend only (not verl's ActorConfig): the forking-token mask.
FORKING_KEYS = ("forking_token_fraction", "forking_token_scope")


def check_algorithm(key: str, algorithm: dict, used_by_verl: bool) -> None:
    """ConfigError naming ``key`` (the algorithm's config key) when its loss mode or KL loss lacks a parameter it
    needs, or it asks for forking-token training where that cannot run (verl)."""
    for needed in POLICY_LOSS_NEEDS.get(algorithm["loss_mode"], ()):
        if needed not in algorithm:
            raise ConfigError(f"{key}: loss_mode {algorithm['loss_mode']!r} needs {needed}")
    if algorithm["use_kl_loss"]:
        for needed in ("kl_loss_coef", "kl_loss_type"):
            if needed not in algorithm:
                raise ConfigError(f"{key}: use_kl_loss = true needs {needed}")
    if "forking_token_scope" in algorithm and "forking_token_fraction" not in algorithm:
        raise ConfigError(f"{key}.forking_token_scope is set without forking_token_fraction (the share of tokens "
                          "kept)")
    if "forking_token_fraction" in algorithm and used_by_verl:
        raise ConfigError(f"{key}.forking_token_fraction: forking-token training is a loss option of the CPU "
                          "backend; verl 0.9.1's actor has no entropy-selected token mask (use rl.backend: cpu)")
    low, high = algorithm.get("clip_ratio_low"), algorithm.get("clip_ratio_high")
    if low is not None and high is not None and high < low:
        raise ConfigError(f"{key}.clip_ratio_high = {high} is below clip_ratio_low = {low}")
