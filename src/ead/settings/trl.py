"""What a grid cell's settings ask of TRL's GRPO code (``rl.trainer: trl``, ``ead.rl.trl.cell``), and what TRL cannot
express: one list, read when the config is checked (``ead.settings.rl_checks``) and again by the cell's job, so a grid
that TRL cannot train is refused before anything runs. Imports nothing of TRL.
"""

from __future__ import annotations

#: The CPU backend's trainers: ``torch`` (``ead.rl.train``: verl's core_algos) or ``trl`` (``ead.rl.trl.cell``).
TRAINERS = ("torch", "trl")
#: The module each trainer's cell job runs (the rule ``rl_cell``).
CELL_MODULES = {"torch": "ead.rl.train", "trl": "ead.rl.trl.cell"}


def trl_problems(algorithm_key: str, algorithm: dict, training: dict) -> list[str]:
    """One line per setting TRL's GRPO code cannot express, for the algorithm document ``algorithm`` (config key
    ``algorithm_key``, e.g. ``rl.algorithms.dapo``) and a sampler's training options ``training`` (``tis``,
    ``trains_at``: ``ead.settings.base.sampler_training``); empty when the cell can run on TRL."""
    problems = []
    if algorithm.get("loss_mode", "vanilla") != "vanilla":
        problems.append(f"{algorithm_key}.loss_mode={algorithm['loss_mode']!r} (TRL has the clipped PPO loss only; "
                        "clip_cov and kl_cov are verl's)")
    if algorithm.get("loss_agg_mode", "token-mean") != "token-mean":
        problems.append(f"{algorithm_key}.loss_agg_mode={algorithm['loss_agg_mode']!r} (mapped: token-mean, TRL's "
                        "dapo loss)")
    if algorithm.get("use_kl_loss", False) and algorithm.get("kl_loss_type", "low_var_kl") != "low_var_kl":
        problems.append(f"{algorithm_key}.kl_loss_type={algorithm['kl_loss_type']!r} (TRL's KL is k3, verl's "
                        "low_var_kl)")
    fraction = algorithm.get("forking_token_fraction")
    if fraction is not None and fraction != 1.0:
        problems.append(f"{algorithm_key}.forking_token_fraction={fraction} (TRL's loss has no token mask of ours)")
    if training.get("trains_at") == "annealed":
        problems.append("trains_at: annealed (TRL evaluates its policy at one temperature)")
    if training.get("tis") == "sequence":
        problems.append("tis: sequence (EADGRPOTrainer's TIS is per token)")
    return problems
