"""``premises``: the premise probe's cross-key rules and the settings of its job (python -m ead.analyses.premises).

:class:`ProbeSettings` is the job's one typed document: made once at DAG build time (:func:`premise_settings`), handed
to the job as JSON (``--settings``, :meth:`ProbeSettings.to_json`) and read back there with
:meth:`ProbeSettings.from_json`, which refuses an unknown or a missing key and a value of the wrong type, naming it
(``probe settings: unknown key 'premises.hott'``; ead.settings.documents).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace

from ead.data.tasks import task_names
from ead.settings.base import ConfigError, sampler_training
from ead.settings.documents import as_document, json_document, read_document
from ead.settings.policies import policy_task
from ead.settings.rl import sampler_schedule

__all__ = ["ProbeRoles", "ProbeSettings", "check_premises", "premise_data", "premise_group_by", "premise_settings"]

_JOB_KEYS = ("split", "limit", "n", "max_new_tokens", "seed", "batch_size", "bootstrap", "steps", "baseline",
             "group_sizes", "tis_cap")
_ROLE_KEYS = ("hot", "cold", "strategy_share_min", "ead", "informative_k")


def premise_data(config: dict, policy: str) -> str:
    """The table the probe samples a policy's problems from: its task's (the job reads the task from the table)."""
    return f"results/data/{policy_task(config, policy)}.parquet"


@dataclass(frozen=True)
class ProbeRoles:
    """The samplers and thresholds each premise reads (config ``premises``: G1's hot and cold samplers, G2's share,
    G3's EAD sampler and its group size)."""

    hot: str
    cold: str
    strategy_share_min: float
    ead: str
    informative_k: int


@dataclass(frozen=True)
class ProbeSettings:
    """Everything the premise probe's job reads: the problems (``split``, ``limit``), sampling (``n``,
    ``max_new_tokens``, ``seed``, ``batch_size``), the samplers resolved to their schedule documents and the RL
    ``steps`` their schedules are probed at, the ``baseline`` every comparison is paired against, the
    ``group_sizes`` of informative@k, the TIS cap whose reach is reported, the bootstrap, the premises' roles, the
    samplers whose c and d0 come from the policy's measured schedule (``measured``) and the data column of the table
    by group (``group_by``). The last two are left out of the document when unused, so the job's command is then
    what it was before they existed."""

    split: str
    limit: int
    n: int
    max_new_tokens: int
    seed: int
    batch_size: int
    bootstrap: int
    steps: tuple[int, ...]
    baseline: str
    group_sizes: tuple[int, ...]
    tis_cap: float
    samplers: dict  # sampler name -> its schedule document (ead.schedule's registry)
    premises: ProbeRoles
    measured: tuple[str, ...] = ()
    group_by: str | None = None

    def to_document(self) -> dict:
        document = as_document(self)
        if not self.measured:
            del document["measured"]
        if self.group_by is None:
            del document["group_by"]
        return document

    def to_json(self) -> str:
        """The document as the job receives it (keys sorted: reordering the config reruns nothing)."""
        return json.dumps(self.to_document(), sort_keys=True)

    @classmethod
    def from_document(cls, document: dict) -> ProbeSettings:
        if isinstance(document, dict):  # the keys left out when unused (to_document)
            document = {"measured": [], "group_by": None, **document}
        return read_document(cls, document, "probe settings")

    @classmethod
    def from_json(cls, text: str) -> ProbeSettings:
        return cls.from_document(json_document(text, "probe settings"))

    def with_samplers(self, samplers: dict) -> ProbeSettings:
        """These settings with other schedule documents for the samplers (the measured ones sized)."""
        return replace(self, samplers=samplers)


def premise_settings(config: dict) -> ProbeSettings:
    """The probe's settings, its samplers resolved to their schedules."""
    premises = config["premises"]
    document = {key: premises[key] for key in _JOB_KEYS}
    document["samplers"] = {name: sampler_schedule(config, name) for name in premises["samplers"]}
    document["premises"] = {key: premises[key] for key in _ROLE_KEYS}
    # c and d0 of these from the policy's measured schedule table, read by the job (ead.analyses.premises)
    document["measured"] = [name for name in premises["samplers"]
                            if sampler_training(config["rl"], config["rl"]["samplers"][name])["measured"]]
    document["group_by"] = premises["group_by"]  # the table by a data column, or None: no such table
    return ProbeSettings.from_document(document)


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
