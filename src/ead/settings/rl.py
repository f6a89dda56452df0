"""``rl``: the RL grid (experiments -> cells), everything one cell's job reads, and the section's cross-key rules.

A cell is (policy, algorithm, sampler, n, seed); the grid is the union of the experiments' products, so a cell shared
by two figures runs once. Both backends read one typed record per cell (:class:`ead.settings.cell.CellSettings`), made
here at DAG build time: the CPU job :func:`cell_settings`, the verl job the same settings plus its backend section (the
verl and grader blocks, :func:`verl_cell_settings`).
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import asdict, dataclass

from ead.metrics import COUNT_METRIC
from ead.schedule import SCHEDULES
from ead.settings.base import ConfigError, schedule_document
from ead.settings.cell import (
    Budget,
    CellSettings,
    Evaluation,
    Optimizer,
    Training,
    TrainPool,
    VerlBackend,
    VerlSettings,
)
from ead.settings.evaluation import evaluates_with_own_sampler
from ead.settings.policies import policy_task
from ead.tables import ALL_TRAIN_METRICS

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


def cell_evaluation(rl: dict) -> Evaluation:
    """`rl.eval` as a cell sees it: without k. A cell writes per-problem counts, which serve every k <= rl.eval.n;
    ead.rl.cell_eval and the aggregation summarise them, so changing k reruns only those (on either backend, so a
    GPU run is never redone for it)."""
    return Evaluation(**{**{key: value for key, value in rl["eval"].items() if key != "k"},
                         "own_sampler": evaluates_with_own_sampler(rl)})


def policy_lr_scale(config: dict, policy: str) -> float:
    """`policies.<policy>.rl_lr_scale` (1 when unset or for hub models): multiplies the lr-by-n rule's value.

    A sharpened copy (logits / T) moves its logits 1/T as far per Adam step (Adam's step size does not depend on the
    gradient's scale), so T keeps the logit-space step of the policy it copies (docs/testbed.md, "The CPU testbed").
    """
    return float(config.get("policies", {}).get(policy, {}).get("rl_lr_scale", 1.0))


def sampler_schedule(config: dict, sampler: str) -> dict:
    """The rollout schedule of ``rl.samplers.<sampler>`` as a `build_schedule` document (ead.settings.base)."""
    return schedule_document(config, config["rl"]["samplers"][sampler], f"rl.samplers.{sampler}")


def sampler_trains_at(config: dict, sampler: str) -> str:
    """Where a fixed-tau sampler's trainer computes log-probs: the sampler's own ``trains_at`` (a fair-baseline cell,
    e.g. tau 1.2 trained at tau = 1 with TIS next to tau 1.2 trained on logits / tau), else rl.fixed_tau_trains_at."""
    return config["rl"]["samplers"][sampler].get("trains_at", config["rl"]["fixed_tau_trains_at"])


def cell_settings(config: dict, cell: Cell) -> CellSettings:
    """Everything the training job of ``cell`` reads (ead.settings.cell): schedule, lr, algorithm, TIS, budget and
    evaluation; no backend section (the CPU backend's)."""
    rl = config["rl"]
    sampler = rl["samplers"][cell.sampler]
    training = Training(
        lr=learning_rate(rl, cell.n) * policy_lr_scale(config, cell.policy),
        algorithm_params=dict(rl["algorithms"][cell.algorithm]),
        optimizer=Optimizer(**{**rl["optimizer"], "betas": tuple(rl["optimizer"]["betas"])}),
        tis=sampler.get("tis", "none"),
        tis_cap=sampler.get("tis_cap", rl["tis_cap"]),
        trains_at=sampler_trains_at(config, cell.sampler),
        measured=sampler.get("measured", False),  # c, d0 from the job's measured table
    )
    pool = rl["train_pool"]
    sizes = {field.name: rl[field.name] for field in dataclasses.fields(Budget) if field.name != "train_pool"}
    budget = Budget(**sizes, train_pool=None if pool is None else TrainPool(**pool))
    return CellSettings(policy=cell.policy, algorithm=cell.algorithm, sampler=cell.sampler, n=cell.n, seed=cell.seed,
                        task=rl["task"], schedule=sampler_schedule(config, cell.sampler), training=training,
                        budget=budget, eval=cell_evaluation(rl), backend=None)


def verl_cell_settings(config: dict, cell: Cell) -> CellSettings:
    """Everything the verl job of ``cell`` reads, resolved once here in the DAG: the CPU cell's settings
    (:func:`cell_settings`: lr, algorithm, schedule, TIS, evaluation) with the verl backend section: the verl block
    with the policy's own overrides (``rl.verl`` then ``paper_models.<policy>.verl``) and the grader (the cell's
    reward). ead.rl.verl.run and ead.rl.verl.overrides read this document and nothing else, so its parameters (and
    Snakemake's rerun decisions) change only when something that affects the cell changes."""
    verl = {**config["rl"]["verl"], **config["paper_models"][cell.policy].get("verl", {})}
    verl["extra_overrides"] = tuple(verl["extra_overrides"])
    backend = VerlBackend(verl=VerlSettings(**verl), grader=dict(config["grader"]))
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
def validate_rl(config: dict) -> None:
    """Cross-key rules of the RL grid: every name an experiment uses exists, and every cell can run.

    ``rl.backend: cpu`` trains the tiny
    ``policies``; ``rl.backend: verl`` trains the hub models of ``paper_models`` and has its own requirements."""
    rl = config["rl"]
    verl = rl["backend"] == "verl"
    if rl["eval"]["n"] < max(rl["eval"]["k"]):
        raise ConfigError(f"rl.eval.n = {rl['eval']['n']} must be >= every k in rl.eval.k = {rl['eval']['k']} "
                          "(unbiased Pass@k needs n >= k samples)")
    if verl:
        _check_verl_sections(config)
    _check_train_pool(rl, verl)
    for name, algorithm in rl["algorithms"].items():
        _check_algorithm(f"rl.algorithms.{name}", algorithm,
                         used_by_verl=verl and any(name in spec["algorithms"] for spec in rl["experiments"].values()))
    for name, sampler in rl["samplers"].items():
        _check_sampler(config, name, sampler, verl)
    _check_experiments(config, verl)


def _check_train_pool(rl: dict, verl: bool) -> None:
    """``rl.train_pool`` (a fixed pool of training problems the CPU trainer draws every step's prompts from): the CPU
    backend's only, and at least one step's prompts."""
    pool = rl["train_pool"]
    if pool is None:
        return
    if verl:
        raise ConfigError(f"rl.train_pool = {pool}: a fixed training pool is an option of the CPU trainer "
                          "(ead.rl.train); verl draws its prompts from paper_data.train's data loader. Set "
                          "rl.train_pool: null (or run it on rl.backend: cpu)")
    if pool["size"] < rl["prompts_per_step"]:
        raise ConfigError(f"rl.train_pool.size = {pool['size']} is below rl.prompts_per_step = "
                          f"{rl['prompts_per_step']}: each step draws its prompts from the pool without repeats")


def _check_algorithm(key: str, algorithm: dict, used_by_verl: bool) -> None:
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


def _check_sampler(config: dict, name: str, sampler: dict, verl: bool) -> None:
    """A sampler is one schedule document (the registry in ead.schedule checks its name, parameters and values) with
    its training options beside it."""
    key = f"rl.samplers.{name}"
    if "name" not in sampler:
        raise ConfigError(f"{key}: a sampler names its schedule (name: fixed, ead, two_stage, linear, ead_mean, "
                          f"entropy_aware, ...) with its parameters beside it, e.g. {{name: ead, tau_min: 0.8, tis: "
                          f"token, tis_cap: 2.0}}; got {sampler}")
    schedule = sampler_schedule(config, name)  # ConfigError naming the sampler and the key
    trains_at = sampler.get("trains_at")
    if trains_at == "annealed":
        _check_annealed_training(key, sampler, schedule, verl)
    elif trains_at is not None and schedule["name"] != "fixed":
        raise ConfigError(f"{key}.trains_at = {trains_at!r}: only a fixed-tau sampler chooses behaviour or one (the "
                          "others train at tau = 1, or at their own tau_t with trains_at: annealed)")
    if sampler.get("measured") and schedule["name"] != "ead":
        raise ConfigError(f"{key}.measured: only an ead sampler takes c and d0 from measurement")
    if verl and sampler.get("tis", "none") != "none" and "tis_cap" not in sampler:
        raise ConfigError(f"{key}.tis = {sampler['tis']!r} needs {key}.tis_cap (verl's rollout_is_threshold)")


def _check_annealed_training(key: str, sampler: dict, schedule: dict, verl: bool) -> None:
    """``trains_at: annealed``: pi_old and pi_theta at each token's sampling temperature (ead.rl.train), the other
    treatment of EAD's off-policy gap; it replaces TIS and needs a temperature known from position and step.

    verl 0.9.1 cannot run it: its trainer divides the logits by one temperature per *sample* (the v1 trainer sets it
    from the scalar rollout.temperature, verl/trainer/ppo/v1/trainer_base.py:573; the FSDP engine asserts a (batch,)
    temperature and copies it to every token, verl/workers/engine/fsdp/transformer_impl.py:1173-1187), and EAD's tau_t
    changes within every response (docs/revisions.md)."""
    if verl:
        raise ConfigError(f"{key}.trains_at = 'annealed' cannot run on rl.backend: verl: verl 0.9.1 divides the "
                          "trainer's logits by one temperature per sample (workers/engine/fsdp/transformer_impl.py; "
                          "the v1 trainer sets it from the scalar rollout.temperature), so pi_old and pi_theta cannot "
                          "be evaluated at each token's tau_t. Run it on rl.backend: cpu, or use EAD + TIS on verl")
    if sampler.get("tis", "none") != "none":
        raise ConfigError(f"{key}: trains_at = 'annealed' trains on-policy at the sampling temperatures, with no "
                          f"importance weight; tis = {sampler['tis']!r} would be ignored")
    if SCHEDULES[schedule["name"]].reads_logits:
        raise ConfigError(f"{key}: trains_at = 'annealed' needs a temperature known from position and step; "
                          f"{schedule['name']!r} sets it from the logits at sampling")


def _check_experiments(config: dict, verl: bool) -> None:
    rl = config["rl"]
    # The backend's policies: the tiny CPU `policies`, or the hub models of `paper_models` for verl.
    policy_source = "paper_models" if verl else "policies"
    fields = [("policies", config[policy_source], "not in paper_models" if verl else "not defined"),
              ("algorithms", rl["algorithms"], "not defined"), ("samplers", rl["samplers"], "not defined")]
    lr_ns = {int(n) for n in rl["lr_by_n"]}
    for name, experiment in rl["experiments"].items():
        key = f"rl.experiments.{name}"
        for field, known, problem in fields:
            unknown = [value for value in experiment[field] if value not in known]
            if unknown:
                raise ConfigError(f"{key}.{field} = {unknown}: {problem}; known {field}: {sorted(known)}")
        if not verl:
            for policy in experiment["policies"]:
                if policy_task(config, policy) != rl["task"]:
                    raise ConfigError(f"{key}.policies: {policy!r} is trained on {policy_task(config, policy)!r}, "
                                      f"not rl.task = {rl['task']!r}")
        for n in experiment["n"]:
            if n not in lr_ns:
                raise ConfigError(f"{key}.n = {n} has no learning rate in rl.lr_by_n (covers {sorted(lr_ns)})")
            if (rl["prompts_per_step"] * n) % rl["mini_batches"]:
                raise ConfigError(f"{key}.n = {n}: rl.prompts_per_step * n = {rl['prompts_per_step'] * n} rollouts "
                                  f"do not split into rl.mini_batches = {rl['mini_batches']} equal mini-batches")


def _check_verl_sections(config: dict) -> None:
    """What the verl backend needs beyond the shared ``rl`` keys (the schema has checked their types)."""
    rl = config["rl"]
    for key in ("paper_models", "paper_data"):
        if key not in config:
            raise ConfigError(f"rl.backend = 'verl' needs the top-level `{key}` section (see configs/paper.yaml)")
    if "verl" not in rl:
        raise ConfigError("rl.backend = 'verl' needs the rl.verl section (see configs/paper.yaml)")
    data_task = config["paper_data"]["train"].get("task", "math")  # hub datasets are graded as math
    if rl["task"] != data_task:
        raise ConfigError(f"rl.task = {rl['task']!r}: the verl backend trains on paper_data.train ({data_task}); set "
                          f"rl.task: {data_task}")
    if config["paper_data"]["val"].get("task", "math") != data_task:
        raise ConfigError(f"paper_data.val is {config['paper_data']['val'].get('task', 'math')} data, paper_data.train "
                          f"{data_task}: one task per run")
    for name, entry in config["paper_models"].items():
        if "policy" in entry and entry["policy"] not in config["policies"]:
            raise ConfigError(f"paper_models.{name}.policy = {entry['policy']!r} is not a tiny policy of `policies`; "
                              f"known: {sorted(config.get('policies', {}))}")
    if evaluates_with_own_sampler(rl):
        raise ConfigError("rl.eval.own_sampler = true: the verl backend validates with one sampling setting (the "
                          "declared rl.eval.tau); set rl.eval.own_sampler: false (see configs/paper.yaml)")
    if rl["prompts_per_step"] % rl["mini_batches"]:
        raise ConfigError(f"rl.prompts_per_step = {rl['prompts_per_step']} must be a multiple of rl.mini_batches = "
                          f"{rl['mini_batches']} (verl's ppo_mini_batch_size = prompts_per_step / mini_batches)")


def check_rl_learns(config: dict) -> None:
    """Premise G4 (``rl_learns``): its sampler is one of rl.samplers, its metric an evaluation metric the cells can
    give, and its thresholds are ordered (the CI bound it must clear is at most the mean it claims)."""
    learns = config.get("rl_learns")
    if not learns:
        return
    if learns["sampler"] not in config["rl"]["samplers"]:
        raise ConfigError(f"rl_learns.sampler = {learns['sampler']!r} is not defined in rl.samplers (known: "
                          f"{sorted(config['rl']['samplers'])})")
    if not check_metric_k(config, "rl_learns.metric", learns["metric"]) and learns["metric"] != "greedy_accuracy":
        raise ConfigError(f"rl_learns.metric = {learns['metric']!r}: not pass@k, worst@k or greedy_accuracy (an "
                          "evaluation metric at step 0 and the last step)")
    if learns["min_ci_low"] > learns["min_effect"]:
        raise ConfigError(f"rl_learns.min_ci_low = {learns['min_ci_low']} exceeds rl_learns.min_effect = "
                          f"{learns['min_effect']} (the CI's lower bound it must clear sits below the mean it claims)")


def check_metric_k(config: dict, key: str, metric: str) -> bool:
    """Whether ``metric`` (the value of config key ``key``) is pass@k / worst@k; ConfigError if its k exceeds
    ``rl.eval.n``, the samples each evaluation draws per problem, with the ``--config`` pairs that fix it (the one
    home of this check: claims, best_of claims, rl_learns and rl.breakdown call it)."""
    match = COUNT_METRIC.fullmatch(metric)
    if match and int(match[2]) > config["rl"]["eval"]["n"]:
        k = match[2]
        raise ConfigError(f"{key} = {metric!r}: k exceeds rl.eval.n = {config['rl']['eval']['n']} samples; evaluate "
                          f"more samples per problem (e.g. --config rl__eval__n={k} rl__eval__k='[1, {k}]') or use a "
                          "k <= rl.eval.n", suggested_overrides={"rl__eval__n": k, "rl__eval__k": f"[1, {k}]"})
    return match is not None


def check_breakdown(config: dict) -> None:
    """``rl.breakdown``: the CPU backend (whose steps.csv records the per-step signal columns and whose task has a data
    table), at most one phase per training step, steps.csv metrics, and an evaluation metric the cells can give."""
    breakdown = config["rl"].get("breakdown")
    if not breakdown:
        return
    if config["rl"]["backend"] != "cpu":
        raise ConfigError("rl.breakdown reads the CPU backend's per-step signal columns and its task's data table; "
                          f"rl.backend is {config['rl']['backend']!r}")
    if breakdown["phases"] > config["rl"]["steps"]:
        raise ConfigError(f"rl.breakdown.phases = {breakdown['phases']} exceeds rl.steps = {config['rl']['steps']} "
                          "(a phase holds at least one training step)")
    unknown = [metric for metric in breakdown["train_metrics"] if metric not in ALL_TRAIN_METRICS]
    if unknown:
        raise ConfigError(f"rl.breakdown.train_metrics: {unknown} are not steps.csv training metrics (known: "
                          f"{ALL_TRAIN_METRICS})")
    if not check_metric_k(config, "rl.breakdown.metric", breakdown["metric"]) and breakdown["metric"] != \
            "greedy_accuracy":
        raise ConfigError(f"rl.breakdown.metric = {breakdown['metric']!r}: not pass@k, worst@k or greedy_accuracy")


def check_paired_baselines(config: dict) -> None:
    """``paired_baselines`` (the baselines of the paired-difference curves, ead.rl.paired) are samplers of
    ``rl.samplers``."""
    known = config["rl"]["samplers"]
    for index, name in enumerate(config.get("paired_baselines", [])):
        if name not in known:
            raise ConfigError(f"paired_baselines[{index}] = {name!r} is not a sampler of rl.samplers (known: "
                              f"{sorted(known)})")


def baseline_algorithm(claim: dict) -> str:
    """The algorithm of an RL claim's baseline cell: its ``baseline_algorithm``, else the claim's ``algorithm``."""
    return claim.get("baseline_algorithm", claim["algorithm"])


def check_claims(config: dict) -> None:
    """Every claim compares two cells of the grid (any seed) on a metric the grid records."""
    grid = {(c.policy, c.algorithm, c.sampler, c.n) for c in expand_grid(config["rl"])}
    seen = set()
    for index, claim in enumerate(config["claims"]):
        key = f"claims[{index}] ({claim['id']})"
        if claim["id"] in seen:
            raise ConfigError(f"{key}: the id {claim['id']!r} is used twice")
        seen.add(claim["id"])
        if sum(other in claim for other in ("baseline", "threshold", "best_of")) != 1:
            raise ConfigError(f"{key}: a claim compares its sampler with a `baseline` cell, with the best of several "
                              "(`best_of`), or its one cell with a `threshold`: exactly one of the three")
        roles = (("sampler", claim["algorithm"]), *((("baseline", baseline_algorithm(claim)),) if "baseline" in claim
                                                    else ()))
        for role, algorithm in roles:
            cell = (claim["policy"], algorithm, claim[role], claim["n"])
            if cell not in grid:
                raise ConfigError(f"{key}.{role}: the cell (policy, algorithm, sampler, n) = {cell} is not in the grid "
                                  "of rl.experiments")
        if "best_of" in claim:
            _check_best_of(config, key, claim, grid)
        elif "selection" in claim:
            raise ConfigError(f"{key}.selection: only a best_of claim chooses its baseline by a selection rule")
        metric = claim["metric"]
        counts = check_metric_k(config, f"{key}.metric", metric)
        if not counts and metric != "greedy_accuracy" and metric not in ALL_TRAIN_METRICS:
            raise ConfigError(f"{key}.metric = {metric!r}: not pass@k, worst@k (or verl's verl_best@k, verl_worst@k), "
                              f"greedy_accuracy or one of the training metrics {ALL_TRAIN_METRICS}")
        if claim.get("over", "last") == "curve":
            if metric in ALL_TRAIN_METRICS or "threshold" in claim:
                what = "is a training metric" if metric in ALL_TRAIN_METRICS else "is a threshold claim"
                raise ConfigError(f"{key}.over = 'curve': only a paired claim on an evaluation metric averages over "
                                  f"the learning curve ({metric!r} {what})")
            if claim.get("evaluated_with") == "own_sampler":
                raise ConfigError(f"{key}.over = 'curve': the own-sampler evaluation exists at the last step only; use "
                                  "over: last or evaluated_with: eval_tau")
        evaluated_with = claim.get("evaluated_with")
        if evaluated_with in ("own_sampler", "train_pool") and metric in ALL_TRAIN_METRICS:
            raise ConfigError(f"{key}.evaluated_with = {evaluated_with!r}: {metric!r} is a training metric, not an "
                              "evaluation")
        if evaluated_with == "train_pool" and not config["rl"].get("train_pool"):
            raise ConfigError(f"{key}.evaluated_with = 'train_pool' needs rl.train_pool (the cells' fixed pool of "
                              "training problems, which they evaluate beside the held-out ones)")
        if evaluated_with == "own_sampler" and not evaluates_with_own_sampler(config["rl"]):
            raise ConfigError(f"{key}.evaluated_with = 'own_sampler' needs rl.eval.own_sampler: true (the cells' "
                              "last-step evaluation with their own sampler)")


def _check_best_of(config: dict, key: str, claim: dict, grid: set) -> None:
    """A ``best_of`` claim (ead.claims.rl.best_of_difference): two or more candidate cells in the grid, none the
    claim's sampler, an evaluation metric to compare, and a declared selection (metric, fraction, seed)."""
    candidates = claim["best_of"]
    if len(set(candidates)) != len(candidates) or len(candidates) < 2:
        raise ConfigError(f"{key}.best_of = {candidates}: name two or more distinct candidate samplers")
    if claim["sampler"] in candidates:
        raise ConfigError(f"{key}.best_of = {candidates} contains the claim's own sampler {claim['sampler']!r}")
    for candidate in candidates:
        cell = (claim["policy"], baseline_algorithm(claim), candidate, claim["n"])
        if cell not in grid:
            raise ConfigError(f"{key}.best_of: the cell (policy, algorithm, sampler, n) = {cell} is not in the grid of "
                              "rl.experiments")
    if "selection" not in claim:
        raise ConfigError(f"{key}: a best_of claim declares its selection rule: selection: {{metric: pass@16, "
                          "fraction: 0.5, seed: 0}} (the candidate best on that share of the evaluation problems is "
                          "the baseline; the rest report)")
    for name, metric in (("metric", claim["metric"]), ("selection.metric", claim["selection"]["metric"])):
        if not check_metric_k(config, f"{key}.{name}", metric) and metric != "greedy_accuracy":
            raise ConfigError(f"{key}.{name} = {metric!r}: a best_of claim chooses and compares on the evaluation "
                              "problems, so pass@k, worst@k or greedy_accuracy")
