"""The RL grid of a config: its cells, each cell's resolved settings, and the cross-key checks of the `rl` section.

A cell is one training run, named by ``(policy, algorithm, sampler, n, seed)``; its results live in
``results/rl/{policy}/{algorithm}/{sampler}/n{n}/seed{seed}/``. The grid is the union of the products of the
named sub-grids in ``rl.experiments`` (deduplicated, in a stable order).

:func:`resolve_cell` turns a cell name into everything a backend needs (algorithm settings, the sampler as a
schedule spec, TIS, learning rate); both backends read cells through it so they cannot disagree.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from ead.schedule import AnnealedSchedule

__all__ = ["Cell", "ResolvedCell", "cell_config", "cell_dir", "grid_cells", "resolve_cell", "rl_config_problems"]


@dataclass(frozen=True, order=True)
class Cell:
    policy: str
    algorithm: str
    sampler: str
    n: int
    seed: int

    def columns(self) -> dict:
        """The cell's identity as result-table columns."""
        return {"policy": self.policy, "algorithm": self.algorithm, "sampler": self.sampler, "n": self.n,
                "seed": self.seed}


def cell_dir(cell: Cell, root: str = "results/rl") -> str:
    return f"{root}/{cell.policy}/{cell.algorithm}/{cell.sampler}/n{cell.n}/seed{cell.seed}"


def grid_cells(rl: dict) -> list[Cell]:
    """Every cell of ``rl.experiments`` (union of the sub-grid products, deduplicated, first-seen order)."""
    seen: dict[Cell, None] = {}
    for experiment in rl["experiments"].values():
        for policy, algorithm, sampler, n, seed in itertools.product(
            experiment["policies"], experiment["algorithms"], experiment["samplers"], experiment["n"],
            experiment["seeds"],
        ):
            seen.setdefault(Cell(policy, algorithm, sampler, int(n), int(seed)), None)
    return list(seen)


@dataclass(frozen=True)
class ResolvedCell:
    """Everything a backend needs to run one cell."""

    cell: Cell
    algorithm: dict  # the rl.algorithms entry
    schedule: dict  # a schedule spec for ead.schedule.build_schedule: {"name": "fixed", "tau": ...} or EAD params
    tis: str | None  # None | "token" | "sequence"
    tis_cap: float | None
    lr: float


def _lr_for(rl: dict, n: int) -> float | None:
    # YAML keys are ints; a config passed through JSON (e.g. snakemake --config) may turn them into strings.
    table = {int(k): float(v) for k, v in rl["lr_by_n"].items()}
    return table.get(int(n))


def resolve_cell(config: dict, cell: Cell) -> ResolvedCell:
    rl = config["rl"]
    sampler = rl["samplers"][cell.sampler]
    if sampler["kind"] == "fixed":
        schedule = {"name": "fixed", "tau": float(sampler["tau"])}
    else:
        schedule = {"name": "ead", **config["ead"], **sampler.get("ead", {})}
    return ResolvedCell(
        cell=cell,
        algorithm=dict(rl["algorithms"][cell.algorithm]),
        schedule=schedule,
        tis=sampler.get("tis"),
        tis_cap=float(sampler["tis_cap"]) if "tis" in sampler else None,
        lr=_lr_for(rl, cell.n),
    )


def cell_config(config: dict, cell: Cell) -> dict:
    """The smallest config that determines ``cell`` (a valid config on its own: one experiment, one cell).

    Jobs receive this instead of the whole config, so their parameters (and Snakemake's rerun decisions) change
    only when something that affects the cell changes.
    """
    rl = config["rl"]
    lr = _lr_for(rl, cell.n)
    subset = {
        "ead": config["ead"],
        "rl": {
            **{key: value for key, value in rl.items() if key not in ("algorithms", "samplers", "experiments",
                                                                       "lr_by_n")},
            "lr_by_n": {cell.n: lr} if lr is not None else {},
            "algorithms": {cell.algorithm: rl["algorithms"][cell.algorithm]},
            "samplers": {cell.sampler: rl["samplers"][cell.sampler]},
            "experiments": {"cell": {"policies": [cell.policy], "algorithms": [cell.algorithm],
                                     "samplers": [cell.sampler], "n": [cell.n], "seeds": [cell.seed]}},
        },
    }
    if "paper_models" in config:
        subset["paper_models"] = {cell.policy: config["paper_models"][cell.policy]}
    if "paper_data" in config:
        subset["paper_data"] = config["paper_data"]
    return subset


_ALGORITHM_NEEDS = {
    "clip_cov": ("clip_cov_ratio", "clip_cov_lb", "clip_cov_ub"),
    "kl_cov": ("kl_cov_ratio", "ppo_kl_coef"),
}


def rl_config_problems(config: dict) -> list[str]:
    """Cross-key problems of the `rl` section (the schema has checked types); each names the key and value."""
    rl = config.get("rl")
    if rl is None:
        return []
    problems = []
    for name, algorithm in rl["algorithms"].items():
        for key in _ALGORITHM_NEEDS.get(algorithm["loss_mode"], ()):
            if key not in algorithm:
                problems.append(f"rl.algorithms.{name}: loss_mode {algorithm['loss_mode']!r} needs {key}")
        if algorithm["use_kl_loss"]:
            for key in ("kl_loss_coef", "kl_loss_type"):
                if key not in algorithm:
                    problems.append(f"rl.algorithms.{name}: use_kl_loss = true needs {key}")
        if algorithm["clip_ratio_high"] < algorithm["clip_ratio_low"] and algorithm["loss_mode"] == "vanilla":
            problems.append(f"rl.algorithms.{name}.clip_ratio_high = {algorithm['clip_ratio_high']} is below "
                            f"clip_ratio_low = {algorithm['clip_ratio_low']}")
    for name, sampler in rl["samplers"].items():
        where = f"rl.samplers.{name}"
        if sampler["kind"] == "fixed":
            if "tau" not in sampler:
                problems.append(f"{where}: kind 'fixed' needs tau")
            if "ead" in sampler:
                problems.append(f"{where}.ead: only samplers of kind 'ead' take EAD overrides")
        elif "tau" in sampler:
            problems.append(f"{where}.tau = {sampler['tau']}: kind 'ead' takes no tau (use `ead:` overrides)")
        if ("tis" in sampler) != ("tis_cap" in sampler):
            problems.append(f"{where}: tis and tis_cap go together (got {sorted(k for k in sampler if 'tis' in k)})")
        if sampler["kind"] == "ead":
            try:
                AnnealedSchedule(**{**config["ead"], **sampler.get("ead", {})})
            except ValueError as error:
                problems.append(f"{where}.ead: {error}")
    try:
        n_values = {int(k) for k in rl["lr_by_n"]}
    except (TypeError, ValueError):
        n_values = set()
        problems.append(f"rl.lr_by_n = {rl['lr_by_n']!r}: keys must be rollout counts n (integers)")
    for name, experiment in rl["experiments"].items():
        where = f"rl.experiments.{name}"
        for key, known in (("algorithms", rl["algorithms"]), ("samplers", rl["samplers"])):
            for value in experiment[key]:
                if value not in known:
                    problems.append(f"{where}.{key}: {value!r} is not defined in rl.{key}; known: {sorted(known)}")
        for n in experiment["n"]:
            if n_values and n not in n_values:
                problems.append(f"{where}.n: {n} has no learning rate in rl.lr_by_n = {rl['lr_by_n']}")
    if rl["prompts_per_step"] % rl["mini_batches"]:
        problems.append(f"rl.prompts_per_step = {rl['prompts_per_step']} must be a multiple of "
                        f"rl.mini_batches = {rl['mini_batches']} (mini-batch size = prompts_per_step / mini_batches)")
    if rl["eval"]["n"] < max(rl["eval"]["k"]):
        problems.append(f"rl.eval.n = {rl['eval']['n']} must be >= every k in rl.eval.k = {rl['eval']['k']}")
    if rl["backend"] == "verl":
        problems.extend(_verl_problems(config))
    return problems


def _verl_problems(config: dict) -> list[str]:
    rl = config["rl"]
    problems = []
    for key in ("paper_models", "paper_data"):
        if key not in config:
            problems.append(f"rl.backend = 'verl' needs the top-level `{key}` section (see configs/paper.yaml)")
    if "verl" not in rl:
        problems.append("rl.backend = 'verl' needs the rl.verl section (see configs/paper.yaml)")
    if rl["eval"]["greedy"]:
        problems.append("rl.eval.greedy = true: the verl backend validates with one sampling setting per run "
                        "(rollout.val_kwargs); set it to false and report sampled metrics")
    if rl["task"] != "math":
        problems.append(f"rl.task = {rl['task']!r}: the verl backend trains on paper_data (math); set rl.task: math")
    models = config.get("paper_models", {})
    for name, experiment in rl["experiments"].items():
        for policy in experiment["policies"]:
            if models and policy not in models:
                problems.append(f"rl.experiments.{name}.policies: {policy!r} is not in paper_models; "
                                f"known: {sorted(models)}")
    return problems
