"""``premises``: the premise probe's cross-key rules and the settings of its job (python -m ead.analyses.premises)."""

from __future__ import annotations

from ead.data.tasks import task_names
from ead.settings.base import ConfigError, sampler_training
from ead.settings.policies import policy_task
from ead.settings.rl import sampler_schedule

_JOB_KEYS = ("split", "limit", "n", "max_new_tokens", "seed", "batch_size", "bootstrap", "steps", "baseline",
             "group_sizes", "tis_cap")
_ROLE_KEYS = ("hot", "cold", "strategy_share_min", "ead", "informative_k")


def premise_data(config: dict, policy: str) -> str:
    """The table the probe samples a policy's problems from: its task's (the job reads the task from the table)."""
    return f"results/data/{policy_task(config, policy)}.parquet"


def premise_settings(config: dict) -> dict:
    """The probe's settings as one document, its samplers resolved to their schedules."""
    premises = config["premises"]
    settings = {key: premises[key] for key in _JOB_KEYS}
    settings["samplers"] = {name: sampler_schedule(config, name) for name in premises["samplers"]}
    settings["premises"] = {key: premises[key] for key in _ROLE_KEYS}
    measured = [name for name in premises["samplers"]
                if sampler_training(config["rl"], config["rl"]["samplers"][name])["measured"]]
    if measured:  # c and d0 from the policy's measured schedule table, read by the job (ead.analyses.premises)
        settings["measured"] = measured
    if premises["group_by"] is not None:  # the table by a data column (absent otherwise: the job's command unchanged)
        settings["group_by"] = premises["group_by"]
    return settings


def premise_group_by(config: dict) -> str | None:
    """The data column the probe's table by group is broken down by (``premises.group_by``), None for no table."""
    return config["premises"]["group_by"]


def check_premises(config: dict) -> None:
    """The probe's policies and samplers exist, and its roles name probed samplers."""
    premises = config.get("premises")
    if not premises or not premises["policies"]:
        return
    unknown = [p for p in premises["policies"] if p not in config["policies"]]
    if unknown:
        raise ConfigError(f"premises.policies = {premises['policies']}: {unknown} not defined in policies "
                          f"(known: {sorted(config['policies'])})")
    probed = task_names(lambda task: task.probed)
    other_task = [p for p in premises["policies"] if policy_task(config, p) not in probed]
    if other_task:
        raise ConfigError(f"premises.policies = {premises['policies']}: {other_task} are not policies of a task the "
                          f"probe classifies failures of ({', '.join(probed)}; a task's classify_failure, "
                          "ead.data.tasks)")
    samplers = config["rl"]["samplers"]
    missing = [s for s in premises["samplers"] if s not in samplers]
    if missing:
        raise ConfigError(f"premises.samplers = {premises['samplers']}: {missing} not defined in rl.samplers "
                          f"(known: {sorted(samplers)})")
    for role in ("baseline", "hot", "cold", "ead"):
        if premises[role] not in premises["samplers"]:
            raise ConfigError(f"premises.{role} = {premises[role]!r} is not one of premises.samplers = "
                              f"{premises['samplers']}")
    if samplers[premises["ead"]]["name"] != "ead":
        kind = samplers[premises["ead"]]["name"]
        raise ConfigError(f"premises.ead = {premises['ead']!r} is a {kind!r} sampler, not 'ead'")
    too_large = [g for g in premises["group_sizes"] if g > premises["n"]]
    if too_large:
        raise ConfigError(f"premises.group_sizes = {premises['group_sizes']}: {too_large} exceed premises.n = "
                          f"{premises['n']} (informative@g needs n >= g samples)")
    if premises["informative_k"] not in premises["group_sizes"]:
        raise ConfigError(f"premises.informative_k = {premises['informative_k']} is not one of premises.group_sizes "
                          f"= {premises['group_sizes']}")
