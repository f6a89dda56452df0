"""``rl``: the RL grid (experiments -> cells), everything one cell's job reads, and the lookups the rule files ask.
The section's cross-key rules are :mod:`ead.settings.rl_checks`, the algorithm keys :mod:`ead.settings.algorithms`,
and the rules of the claims on the grid :mod:`ead.settings.claims`.

A cell is (policy, algorithm, sampler, n, seed); the grid is the union of the experiments' products, so a cell shared
by two figures runs once. Both backends read one typed record per cell (:class:`ead.settings.cell.CellSettings`), made
here at DAG build time: the CPU job :func:`cell_settings` (the grader among them), the verl job the same settings plus
its backend section (the verl block, :func:`verl_cell_settings`).
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import asdict, dataclass

from ead.settings.base import sampler_training, schedule_document
from ead.settings.cell import (
    AlgorithmParams,
    Budget,
    CellSettings,
    GraderSettings,
    Optimizer,
    Training,
    TrainPool,
    VerlBackend,
    VerlSettings,
)
from ead.settings.evaluation import cell_evaluation

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


def policy_lr_scale(config: dict, policy: str) -> float:
    """`policies.<policy>.rl_lr_scale` (1 when unset or for hub models): multiplies the lr-by-n rule's value.

    A sharpened copy (logits / T) moves its logits 1/T as far per Adam step (Adam's step size does not depend on the
    gradient's scale), so T keeps the logit-space step of the policy it copies (docs/testbed.md, "The CPU testbed").
    """
    return float(config["policies"].get(policy, {}).get("rl_lr_scale", 1.0))


def sampler_schedule(config: dict, sampler: str) -> dict:
    """The rollout schedule of ``rl.samplers.<sampler>`` as a `build_schedule` document (ead.settings.base)."""
    return schedule_document(config, config["rl"]["samplers"][sampler], f"rl.samplers.{sampler}")


def cell_budget(rl: dict) -> Budget:
    """A cell's budget (steps, prompts per step, mini-batches, checkpoints, the training pool): the same for every
    cell of the grid."""
    pool = rl["train_pool"]
    sizes = {field.name: rl[field.name] for field in dataclasses.fields(Budget) if field.name != "train_pool"}
    return Budget(**sizes, train_pool=None if pool is None else TrainPool(**pool))


def cell_settings(config: dict, cell: Cell) -> CellSettings:
    """Everything the training job of ``cell`` reads (ead.settings.cell): schedule, lr, algorithm, TIS, budget,
    evaluation and grader; no backend section (the CPU backend's)."""
    rl = config["rl"]
    training = Training(
        lr=learning_rate(rl, cell.n) * policy_lr_scale(config, cell.policy),
        algorithm_params=AlgorithmParams(**rl["algorithms"][cell.algorithm]),
        optimizer=Optimizer(**{**rl["optimizer"], "betas": tuple(rl["optimizer"]["betas"])}),
        **sampler_training(rl, rl["samplers"][cell.sampler]),  # measured: c, d0 from the job's measured table
    )
    return CellSettings(policy=cell.policy, algorithm=cell.algorithm, sampler=cell.sampler, n=cell.n, seed=cell.seed,
                        task=rl["task"], schedule=sampler_schedule(config, cell.sampler), training=training,
                        budget=cell_budget(rl), eval=cell_evaluation(rl),
                        grader=GraderSettings.from_mapping(config["grader"]), backend=None)


def verl_cell_settings(config: dict, cell: Cell) -> CellSettings:
    """Everything the verl job of ``cell`` reads, resolved once here in the DAG: the CPU cell's settings
    (:func:`cell_settings`: lr, algorithm, schedule, TIS, evaluation, the grader of its reward) with the verl backend
    section: the verl block with the policy's own overrides (``rl.verl`` then ``paper_models.<policy>.verl``).
    ead.rl.verl.run and ead.rl.verl.overrides read this document and nothing else, so its parameters (and
    Snakemake's rerun decisions) change only when something that affects the cell changes."""
    verl = {**config["rl"]["verl"], **config["paper_models"][cell.policy].get("verl", {})}
    verl["extra_overrides"] = tuple(verl["extra_overrides"])
    backend = VerlBackend(verl=VerlSettings(**verl))
    return dataclasses.replace(cell_settings(config, cell), backend=backend)


# --- what the RL rules read (workflow/rules/rl*.smk): values, which the rule files turn into paths and flags --------

def grid_cells(config: dict, experiments: list[str] | None = None) -> list[Cell]:
    """The cells of the named experiments (the whole grid by default): :func:`expand_grid` of ``rl``."""
    return expand_grid(config["rl"], experiments)


def figure_k(config: dict) -> int:
    """The k an RL figure draws Pass@k / Worst@k at: the largest of rl.eval.k."""
    return max(config["rl"]["eval"]["k"])


def rl_task(config: dict) -> str:
    """The task the RL cells train and are evaluated on (rl.task; their step-0 evaluation grades it too)."""
    return config["rl"]["task"]


def rl_data(config: dict) -> str:
    """The CPU cells' problems table: rl.task's (its train split the prompts, rl.eval.split the evaluation)."""
    return f"results/data/{rl_task(config)}.parquet"


def rl_learns_runs(config: dict) -> bool:
    """Premise G4 (``rl_learns``) has a table: the config asks for it and the grid runs its sampler."""
    learns = config.get("rl_learns")
    return bool(learns) and any(cell.sampler == learns["sampler"] for cell in grid_cells(config))


def rl_learns_pool_runs(config: dict) -> bool:
    """G4's rule is also applied to the cells' fixed training pool (its own table): G4 runs and so does a pool."""
    return rl_learns_runs(config) and bool(config["rl"].get("train_pool"))


def breakdown_runs(config: dict) -> bool:
    """The grid is broken down by phase and by a data column (``rl.breakdown``, ead.rl.breakdown): the config asks."""
    return bool(config["rl"].get("breakdown"))


def breakdown_settings(config: dict) -> dict:
    """ead.rl.breakdown's settings: ``rl.breakdown`` (phases, train_metrics, group_by, metric)."""
    return dict(config["rl"]["breakdown"])


def figure_experiment(config: dict, figure: str, experiment: str) -> dict:
    """``rl.experiments.<experiment>``, the cells the RL figure ``figure`` draws (ead.workflow.FIGURES names it)."""
    if experiment not in config["rl"]["experiments"]:
        raise ValueError(f"figure {figure} draws rl.experiments.{experiment}, which the config does not define")
    return config["rl"]["experiments"][experiment]


def local_verl_models(config: dict) -> dict[str, str]:
    """paper_models made offline from a tiny policy (the verl_cpu profile): model name -> the policy it exports."""
    return {name: entry["policy"] for name, entry in config["paper_models"].items() if "policy" in entry}


def paper_data_is_local(config: dict) -> bool:
    """True if paper_data is a synthetic task's split made offline (the verl_cpu profile), not hub datasets."""
    return "task" in config["paper_data"]["train"]


def paper_data_task(config: dict, role: str) -> str:
    """The task whose grading a ``paper_data`` entry (role train or val) takes: its synthetic ``task``, else ``math``
    (hub datasets are graded as math; the one default)."""
    return config["paper_data"][role].get("task", "math")


def paper_data_entry(config: dict, role: str) -> dict:
    """One ``paper_data`` entry (role train or val): a hub dataset's spec, or a synthetic task and its limit."""
    return config["paper_data"][role]


def paper_data_instruction(config: dict) -> str:
    """The instruction every hub problem's prompt carries (paper_data.instruction)."""
    return config["paper_data"]["instruction"]


def verl_cell_threads(config: dict, cores: int) -> int:
    """Threads of one verl cell: on ``rl.verl.device: cpu`` a run takes every core (cells run one after another);
    on GPUs the job itself needs one."""
    return cores if config["rl"]["verl"]["device"] == "cpu" else 1
