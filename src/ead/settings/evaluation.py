"""``base_eval`` and ``rl.eval``: the settings of a policy evaluation job (``python -m ead.evaluation``), and
``rl.eval`` as the cells' typed group (:class:`ead.settings.cell.Evaluation`), which the RL cells and their step-0
evaluation both read."""

from __future__ import annotations

from dataclasses import asdict

from ead.settings.base import ConfigError
from ead.settings.cell import Evaluation

#: Fields of the cells' evaluation group that say when and how else the RL job evaluates, not settings of an
#: evaluation job.
RL_ONLY_EVAL_FIELDS = ("every", "own_sampler")


def evaluates_with_own_sampler(rl: dict) -> bool:
    """``rl.eval.own_sampler``: whether each cell also evaluates its last step with its own sampler (off unless the
    config says so; the one place its default is written)."""
    return bool(rl["eval"].get("own_sampler", False))


def cell_evaluation(rl: dict) -> Evaluation:
    """`rl.eval` as a cell sees it: without k. A cell writes per-problem counts, which serve every k <= rl.eval.n;
    ead.rl.cell_eval and the aggregation summarise them, so changing k reruns only those (on either backend, so a
    GPU run is never redone for it)."""
    return Evaluation(**{**{key: value for key, value in rl["eval"].items() if key != "k"},
                         "own_sampler": evaluates_with_own_sampler(rl)})


def check_base_eval(config: dict) -> None:
    base_eval = config["base_eval"]
    if "every" in base_eval:  # the schema's one evaluation block allows it for rl.eval
        raise ConfigError("unknown key(s) base_eval.every; `every` (steps between evaluations) belongs to rl.eval")
    if base_eval["n"] < max(base_eval["k"]):
        raise ConfigError(f"base_eval.n = {base_eval['n']} must be >= every k in base_eval.k = {base_eval['k']} "
                          "(unbiased Pass@k needs n >= k samples)")


def evaluation_settings(config: dict, evaluation: str) -> dict:
    """The settings of one evaluation job: ``base_eval`` ("base") or the RL cells' step-0 evaluation ("rl_base": the
    cells' own evaluation group, :func:`cell_evaluation`, less :data:`RL_ONLY_EVAL_FIELDS`, so step 0 and every later
    evaluation of a cell are drawn alike), the sampler as a schedule spec (the declared fixed temperature).

    The step-0 evaluation reports k = 1 and k = n, not rl.eval.k: the cells read its per-problem counts, so changing
    rl.eval.k reruns no evaluation and no cell (rule rl_cell_eval summarises the cells)."""
    if evaluation == "rl_base":
        group = asdict(cell_evaluation(config["rl"]))
        settings = {key: value for key, value in group.items() if key not in RL_ONLY_EVAL_FIELDS}
        settings["k"] = sorted({1, settings["n"]})
    else:
        settings = dict(config["base_eval"])
    settings["schedule"] = {"name": "fixed", "tau": settings.pop("tau")}
    return settings
