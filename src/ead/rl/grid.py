"""The RL grid: config `rl.experiments` expanded into cells, and everything one cell needs to run.

A cell is (policy, algorithm, sampler, n, seed). Experiments are named sub-grids (one per figure family); the grid
is the union of their products, so a cell shared by two figures runs once. The learning rate follows the paper's
lr-by-n rule (`rl.lr_by_n`). `cell_settings` resolves a cell into the one JSON document the CPU training job
reads, so Snakemake reruns a cell exactly when something that cell uses changes. The verl backend (`ead.rl.verl`)
resolves a cell through the same functions; its job reads `cell_config` (the cell's slice of the whole config,
with the hub model and the `rl.verl` settings it needs). `table_columns` are the settings columns both backends
write into every result table.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import asdict, dataclass

CELL_PATTERN = "results/rl/{policy}/{algorithm}/{sampler}/n{n}/seed{seed}"


@dataclass(frozen=True, order=True)
class Cell:
    policy: str
    algorithm: str
    sampler: str
    n: int
    seed: int

    @property
    def directory(self) -> str:
        return CELL_PATTERN.format(**asdict(self))


def expand_grid(rl: dict, experiments: list[str] | None = None) -> list[Cell]:
    """Sorted, de-duplicated cells of the named experiments (all of them by default)."""
    names = list(rl["experiments"]) if experiments is None else experiments
    cells = set()
    for name in names:
        if name not in rl["experiments"]:
            raise KeyError(f"rl.experiments has no experiment {name!r}; known: {sorted(rl['experiments'])}")
        spec = rl["experiments"][name]
        for combo in itertools.product(spec["policies"], spec["algorithms"], spec["samplers"], spec["n"],
                                       spec["seeds"]):
            cells.add(Cell(*combo))
    return sorted(cells)


def learning_rate(rl: dict, n: int) -> float:
    """The paper's lr-by-n rule (n = 4 -> 1e-6, 8 -> 2e-6, 16 -> 4e-6 at paper scale), from `rl.lr_by_n`."""
    table = {int(key): float(value) for key, value in rl["lr_by_n"].items()}
    if n not in table:
        raise KeyError(f"rl.lr_by_n has no learning rate for n = {n}; it covers n in {sorted(table)}")
    return table[n]


def reported_ks(n: int) -> list[int]:
    """The k of a cell's own eval.csv when the config's rl.eval.k is not given to it: 1, 2, 4, ... up to n, and n."""
    return sorted({1, n, *(2 ** i for i in range(1, n.bit_length()) if 2 ** i <= n)})


def cell_eval_settings(rl: dict) -> dict:
    """`rl.eval` as a cell sees it: without k. A cell writes per-problem counts, which serve every k <= rl.eval.n;
    ead.rl.cell_eval and the aggregation summarise them, so changing k reruns only those (on either backend, so a
    GPU run is never redone for it)."""
    return {key: value for key, value in rl["eval"].items() if key != "k"}


def policy_lr_scale(config: dict, policy: str) -> float:
    """`policies.<policy>.rl_lr_scale` (1 when unset or for hub models): multiplies the lr-by-n rule's value.

    A sharpened copy (logits / T) moves its logits 1/T as far per Adam step (Adam's step size does not depend on the
    gradient's scale), so T keeps the logit-space step of the policy it copies (README, "The CPU testbed").
    """
    return float(config.get("policies", {}).get(policy, {}).get("rl_lr_scale", 1.0))


def sampler_schedule(config: dict, sampler: str) -> dict:
    """The rollout schedule of a sampler as a `build_schedule` document (EAD: top-level `ead` + overrides)."""
    spec = config["rl"]["samplers"][sampler]
    if spec["kind"] == "fixed":
        return {"name": "fixed", "tau": spec["tau"]}
    if spec["kind"] == "two_stage":
        return {"name": "two_stage", **{key: spec[key] for key in ("tau_early", "tau_late", "switch")}}
    if spec["kind"] == "linear":
        return {"name": "linear", **spec["linear"]}
    if spec["kind"] == "entropy_aware":
        return {"name": "entropy_aware", **spec["entropy_aware"]}
    if spec["kind"] == "ead_mean":
        return {"name": "ead_mean", **config["ead"], **spec.get("ead", {}), "length": spec["mean_over"]}
    return {"name": "ead", **config["ead"], **spec.get("ead", {})}


def sampler_trains_at(config: dict, sampler: str) -> str:
    """Where a fixed-tau sampler's trainer computes log-probs: the sampler's own ``trains_at`` (a fair-baseline cell,
    e.g. tau 1.2 trained at tau = 1 with TIS next to tau 1.2 trained on logits / tau), else rl.fixed_tau_trains_at."""
    return config["rl"]["samplers"][sampler].get("trains_at", config["rl"]["fixed_tau_trains_at"])


def cell_settings(config: dict, cell: Cell) -> dict:
    """Everything the training job of ``cell`` reads: algorithm, sampler, schedule, lr and the shared settings."""
    rl = config["rl"]
    sampler = rl["samplers"][cell.sampler]
    shared = {key: rl[key] for key in ("task", "steps", "prompts_per_step", "mini_batches", "max_new_tokens",
                                       "optimizer", "checkpoint_every")}
    shared["fixed_tau_trains_at"] = sampler_trains_at(config, cell.sampler)
    shared["eval"] = cell_eval_settings(rl)
    return {
        **asdict(cell),
        **shared,
        "lr": learning_rate(rl, cell.n) * policy_lr_scale(config, cell.policy),
        "algorithm_params": rl["algorithms"][cell.algorithm],
        "schedule": sampler_schedule(config, cell.sampler),
        "tis": sampler.get("tis", "none"),
        "tis_cap": sampler.get("tis_cap", rl["tis_cap"]),
        **({"measured_schedule": True} if sampler.get("measured") else {}),  # c, d0 from the job's measured table
    }


def table_columns(settings: dict) -> dict:
    """The settings columns every result table of a cell carries (from `cell_settings`), for both backends."""
    return {"lr": settings["lr"], "tis": settings["tis"], "tis_cap": settings["tis_cap"],
            "loss_mode": settings["algorithm_params"]["loss_mode"],
            "schedule_params": json.dumps(settings["schedule"], sort_keys=True),
            "fixed_tau_trains_at": settings["fixed_tau_trains_at"], "eval_tau": settings["eval"]["tau"],
            "prompts_per_step": settings["prompts_per_step"], "mini_batches": settings["mini_batches"]}


def cell_config(config: dict, cell: Cell) -> dict:
    """The smallest config that determines ``cell`` (valid for `ead.config.validate_rl`: one experiment, one cell).

    The verl job receives this instead of the whole config, so its parameters (and Snakemake's rerun decisions)
    change only when something that affects the cell changes.
    """
    rl = config["rl"]
    subset = {
        "ead": config["ead"],
        "grader": config["grader"],  # the cell's reward
        "rl": {
            **{key: value for key, value in rl.items() if key not in ("algorithms", "samplers", "experiments",
                                                                       "lr_by_n", "eval")},
            "eval": cell_eval_settings(rl),
            "lr_by_n": {cell.n: learning_rate(rl, cell.n)},
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
