"""The ``rl`` section's cross-key rules (:func:`validate_rl`): every name an experiment uses exists, and every cell
can run on its backend (samplers, training pools, the verl sections). The algorithm documents' own rule is
:func:`ead.settings.algorithms.check_algorithm`; the rules of what reads the grid are :mod:`ead.settings.claims`.
"""

from __future__ import annotations

from ead.schedule import SCHEDULES
from ead.settings.algorithms import check_algorithm
from ead.settings.base import ConfigError, sampler_training
from ead.settings.evaluation import evaluates_with_own_sampler
from ead.settings.policies import policy_task
from ead.settings.rl import paper_data_task, sampler_schedule
from ead.settings.trl import trl_problems


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
        check_algorithm(f"rl.algorithms.{name}", algorithm,
                         used_by_verl=verl and any(name in spec["algorithms"] for spec in rl["experiments"].values()))
    for name, sampler in rl["samplers"].items():
        _check_sampler(config, name, sampler, verl)
    _check_experiments(config, verl)
    _check_trainer(rl, verl)


def _check_trainer(rl: dict, verl: bool) -> None:
    """``rl.trainer: trl`` (the CPU backend's cells on TRL's GRPO code): every cell that runs must be one TRL can
    express (``ead.settings.trl.trl_problems``), so a grid is refused before its first job rather than by it."""
    if rl.get("trainer", "torch") != "trl":
        return
    if verl:
        raise ConfigError("rl.trainer = 'trl' trains the CPU backend's cells (ead.rl.trl.cell); rl.backend is 'verl', "
                          "whose cells are verl's runs. Set rl.trainer: torch (or rl.backend: cpu)")
    running = rl.get("run") or list(rl["experiments"])
    problems = {}
    for name in running:
        experiment = rl["experiments"][name]
        for algorithm in experiment["algorithms"]:
            for sampler in experiment["samplers"]:
                for problem in trl_problems(f"rl.algorithms.{algorithm}", rl["algorithms"][algorithm],
                                            sampler_training(rl, rl["samplers"][sampler])):
                    problems.setdefault(problem, f"rl.experiments.{name} ({algorithm}, {sampler})")
    if problems:
        raise ConfigError("rl.trainer = 'trl' cannot train these cells: " + "; ".join(
            f"{problem} in {where}" for problem, where in problems.items()))


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


def _check_sampler(config: dict, name: str, sampler: dict, verl: bool) -> None:
    """A sampler is one schedule document (the registry in ead.schedule checks its name, parameters and values) with
    its training options beside it."""
    key = f"rl.samplers.{name}"
    if "name" not in sampler:
        raise ConfigError(f"{key}: a sampler names its schedule (name: fixed, ead, two_stage, linear, ead_mean, "
                          f"entropy_aware, ...) with its parameters beside it, e.g. {{name: ead, tau_min: 0.8, tis: "
                          f"token, tis_cap: 2.0}}; got {sampler}")
    schedule = sampler_schedule(config, name)  # ConfigError naming the sampler and the key
    training = sampler_training(config["rl"], sampler)
    trains_at = sampler.get("trains_at")  # stated by the sampler, or None
    if trains_at == "annealed":
        _check_annealed_training(key, training["tis"], schedule, verl)
    elif trains_at is not None and schedule["name"] != "fixed":
        raise ConfigError(f"{key}.trains_at = {trains_at!r}: only a fixed-tau sampler chooses behaviour or one (the "
                          "others train at tau = 1, or at their own tau_t with trains_at: annealed)")
    if training["measured"] and schedule["name"] != "ead":
        raise ConfigError(f"{key}.measured: only an ead sampler takes c and d0 from measurement")
    if verl and training["tis"] != "none" and "tis_cap" not in sampler:
        raise ConfigError(f"{key}.tis = {sampler['tis']!r} needs {key}.tis_cap (verl's rollout_is_threshold)")


def _check_annealed_training(key: str, tis: str, schedule: dict, verl: bool) -> None:
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
    if tis != "none":
        raise ConfigError(f"{key}: trains_at = 'annealed' trains on-policy at the sampling temperatures, with no "
                          f"importance weight; tis = {tis!r} would be ignored")
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
    data_task = paper_data_task(config, "train")
    if rl["task"] != data_task:
        raise ConfigError(f"rl.task = {rl['task']!r}: the verl backend trains on paper_data.train ({data_task}); set "
                          f"rl.task: {data_task}")
    val_task = paper_data_task(config, "val")
    if val_task != data_task:
        raise ConfigError(f"paper_data.val is {val_task} data, paper_data.train "
                          f"{data_task}: one task per run")
    for name, entry in config["paper_models"].items():
        if "policy" in entry and entry["policy"] not in config["policies"]:
            raise ConfigError(f"paper_models.{name}.policy = {entry['policy']!r} is not a tiny policy of `policies`; "
                              f"known: {sorted(config['policies'])}")
    if evaluates_with_own_sampler(rl):
        raise ConfigError("rl.eval.own_sampler = true: the verl backend validates with one sampling setting (the "
                          "declared rl.eval.tau); set rl.eval.own_sampler: false (see configs/paper.yaml)")
    if rl["prompts_per_step"] % rl["mini_batches"]:
        raise ConfigError(f"rl.prompts_per_step = {rl['prompts_per_step']} must be a multiple of rl.mini_batches = "
                          f"{rl['mini_batches']} (verl's ppo_mini_batch_size = prompts_per_step / mini_batches)")
