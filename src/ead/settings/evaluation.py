"""``base_eval`` and ``rl.eval``: the settings of a policy evaluation job (``python -m ead.evaluation``)."""

from __future__ import annotations

from ead.settings.base import ConfigError

#: Keys of rl.eval that say when and how else the RL job evaluates, not settings of an evaluation job.
RL_ONLY_EVAL_KEYS = ("every", "own_sampler")


def evaluates_with_own_sampler(rl: dict) -> bool:
    """``rl.eval.own_sampler``: whether each cell also evaluates its last step with its own sampler (off unless the
    config says so; the one place its default is written)."""
    return bool(rl["eval"].get("own_sampler", False))


def check_base_eval(config: dict) -> None:
    base_eval = config["base_eval"]
    if "every" in base_eval:  # the schema's one evaluation block allows it for rl.eval
        raise ConfigError("unknown key(s) base_eval.every; `every` (steps between evaluations) belongs to rl.eval")
    if base_eval["n"] < max(base_eval["k"]):
        raise ConfigError(f"base_eval.n = {base_eval['n']} must be >= every k in base_eval.k = {base_eval['k']} "
                          "(unbiased Pass@k needs n >= k samples)")


def evaluation_settings(config: dict, evaluation: str) -> dict:
    """The settings of one evaluation job: ``base_eval`` ("base") or ``rl.eval`` ("rl_base", the RL cells' step-0
    evaluation), the sampler as a schedule spec (the declared fixed temperature).

    The step-0 evaluation reports k = 1 and k = n, not rl.eval.k: the cells read its per-problem counts, so changing
    rl.eval.k reruns no evaluation and no cell (rule rl_cell_eval summarises the cells)."""
    settings = dict(config["base_eval"] if evaluation == "base" else config["rl"]["eval"])
    if evaluation == "rl_base":
        settings["k"] = sorted({1, settings["n"]})
    settings["schedule"] = {"name": "fixed", "tau": settings.pop("tau")}
    for key in RL_ONLY_EVAL_KEYS:
        settings.pop(key, None)
    return settings
