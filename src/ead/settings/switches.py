"""What the Snakefile and the rule files decide when they are parsed, from the checked config, in one typed place:
the profile and its output root, the CPU kernels every job runs at, the RL backend, which optional parts of the
workflow exist (the measured schedule, the hub models, the inference-only comparison), the real datasets, and the
policies the premise probe runs on.

The rule files read these attributes (``SWITCHES``, made once in workflow/rules/common.smk) instead of the config's
keys, so each key's meaning and default is written here once; everything a job receives goes through
:mod:`ead.settings.arguments` and the sections' resolvers.
"""

from __future__ import annotations

from dataclasses import dataclass

from ead.settings.trl import CELL_MODULES


@dataclass(frozen=True)
class HubModel:
    """A model of ``paper_models`` downloaded from the hub: its hub id and the revision pinned for it."""

    hub_id: str
    revision: str


@dataclass(frozen=True)
class WorkflowSwitches:
    """The parse-time settings of the workflow (module docstring). Build with :func:`workflow_switches`."""

    profile: str  # `profile`: "default" writes results/ and figures/ at the top; any other, runs/<profile>/
    results_meaning: str  # `results_meaning`: findings, or plumbing (a toy-sized run: no number in it is a result)
    cpu_level: str  # numerics.cpu_level (ead.numerics)
    job_threads: int  # numerics.threads: torch threads of each CPU torch job
    rl_backend: str  # rl.backend: cpu (tiny policies) or verl (the paper profile's hub models)
    rl_cell_module: str  # the CPU backend's cell job: ead.rl.train (rl.trainer: torch) or ead.rl.trl.cell (trl)
    measured_schedule_policies: tuple[str, ...]  # measured_schedule.policies; none without that section
    paper_models: tuple[str, ...]  # names of paper_models (hub models, or tiny policies exported as chat models)
    hub_models: dict[str, HubModel]  # those of paper_models downloaded from the hub, by name
    inference_only: bool  # whether the inference-only comparison runs (an `inference_only` section)
    real_datasets: tuple[str, ...]  # data.real: the registry benchmarks the offline model's analyses read
    probed_policies: tuple[str, ...]  # premises.policies
    probe_threads: int  # premises.threads

    @property
    def output_root(self) -> str:
        """Where the profile's results/, figures/, logs and Snakemake metadata go (the Snakefile's workdir)."""
        return "." if self.profile == "default" else f"runs/{self.profile}"


def workflow_switches(config: dict) -> WorkflowSwitches:
    """The parse-time settings of a checked config (:func:`ead.settings.load_workflow_config`)."""
    measured = config.get("measured_schedule") or {}
    paper_models = config.get("paper_models") or {}
    return WorkflowSwitches(
        profile=config.get("profile", "default"),
        results_meaning=config.get("results_meaning", "findings"),
        cpu_level=config["numerics"]["cpu_level"],
        job_threads=config["numerics"]["threads"],
        rl_backend=config["rl"]["backend"],
        rl_cell_module=CELL_MODULES[config["rl"].get("trainer", "torch")],
        measured_schedule_policies=tuple(measured.get("policies", ())),
        paper_models=tuple(paper_models),
        hub_models={name: HubModel(entry["hub_id"], entry["revision"]) for name, entry in paper_models.items()
                    if "hub_id" in entry},
        inference_only=bool(config.get("inference_only")),
        real_datasets=tuple(config["data"]["real"]),
        probed_policies=tuple(config["premises"]["policies"]),
        probe_threads=config["premises"]["threads"],
    )
