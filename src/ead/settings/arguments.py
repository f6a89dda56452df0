"""Every rule's job arguments from the config: the command-line flags (and JSON documents) a workflow job is called
with, and the names its wildcards take. The rule files (workflow/rules/*.smk) call these with the config and a job's
wildcards and read no config key themselves, so what a job receives is written once, here, beside the resolvers of
each section (:mod:`ead.settings.analyses`, :mod:`ead.settings.evaluation`, ...).

Flags are sorted by key and JSON is dumped with sorted keys: reordering a config file changes no job's params, so
Snakemake reruns nothing for it.
"""

from __future__ import annotations

import json
import os
import shlex

from ead.schedule import resolve_schedule
from ead.settings.analyses import analysis_job_settings
from ead.settings.evaluation import cell_evaluation, evaluation_settings
from ead.settings.inference_only import inference_only_schedule
from ead.settings.rl import breakdown_settings, cell_budget

__all__ = ["analysis_args", "analysis_claims_params", "breakdown_args", "cache_dir", "cell_eval_args", "claims_params",
           "cli_args", "completeness_args", "ead_schedule", "evaluation_args", "grader_arg",
           "inference_only_eval_args", "inference_only_table_args", "json_arg", "measured_schedule_args",
           "paired_curves_args", "rerun_command", "rl_learns_args", "rl_tables_args", "schedule_table_args",
           "schedule_table_settings",
           "synthetic_data_args", "wildcard_names"]


def cli_args(options: dict) -> str:
    """Render a mapping as `--key value` CLI flags (lists become repeated values), shell-quoted.

    Keys are sorted so that reordering keys in a config file does not change the params and trigger a rerun.
    """
    parts = []
    for key, value in sorted(options.items()):
        flag = f"--{key.replace('_', '-')}"
        values = value if isinstance(value, (list, tuple)) else [value]
        parts.append(" ".join([flag] + [shlex.quote(str(v)) for v in values]))
    return " ".join(parts)


def json_arg(value) -> str:
    """One shell-quoted JSON argument (keys sorted: reordering a config file reruns nothing)."""
    return shlex.quote(json.dumps(value, sort_keys=True))


# --- what every rule file needs: the wheel cache, the wildcards' names, the grader -------------------------------

def cache_dir(config: dict, output_root: str) -> str:
    """The wheel cache as the jobs see it from the profile's root (``output_root``, the Snakefile's ``workdir:``): it
    is shared by every profile, so a relative ``cache_dir`` means the checkout's wherever the run's root is."""
    path = config["cache_dir"]
    if os.path.isabs(path) or output_root == ".":
        return path
    return os.path.relpath(path, output_root)


def wildcard_names(config: dict) -> dict[str, list[str]]:
    """The names the workflow's wildcards may take: ``policy`` (the RL backend's policies: tiny ``policies`` on cpu,
    ``paper_models`` on verl), ``algorithm`` and ``sampler`` (rl), ``hub_model`` (the paper_models with a hub id)."""
    rl = config["rl"]
    return {"policy": list(config["paper_models"] if rl["backend"] == "verl" else config["policies"]),
            "algorithm": list(rl["algorithms"]), "sampler": list(rl["samplers"]),
            "hub_model": [name for name, entry in config.get("paper_models", {}).items() if "hub_id" in entry]}


def grader_arg(config: dict) -> str:
    """The grader settings every grading job receives (config section ``grader``), as one --grader JSON flag."""
    return f"--grader {json_arg(config['grader'])}"


# --- data, evaluation --------------------------------------------------------------------------------------------

def synthetic_data_args(config: dict, task: str) -> str:
    """ead.data.build for a synthetic task: its ``data.<task>`` block."""
    return cli_args(config["data"][task])


def evaluation_args(config: dict, evaluation: str) -> str:
    """ead.evaluation: ``base_eval`` ("base") or ``rl.eval`` ("rl_base"), see
    :func:`ead.settings.evaluation.evaluation_settings`; the declared sampler as a --schedule document."""
    settings = evaluation_settings(config, evaluation)
    schedule = shlex.quote(json.dumps(settings.pop("schedule")))
    return f"{cli_args(settings)} --schedule {schedule} {grader_arg(config)}"


# --- schedules: Fig. 3's table and the measured schedule ---------------------------------------------------------

def ead_schedule(config: dict) -> dict:
    """The hand-sized EAD schedule: the config's ``ead`` block resolved by :func:`ead.schedule.resolve_schedule` (the
    one place EAD's defaults apply), without its ``name``."""
    resolved = resolve_schedule({"name": "ead"}, config["ead"])
    return {key: value for key, value in resolved.items() if key != "name"}


def schedule_table_settings(config: dict) -> dict:
    """Fig. 3's schedule table (``ead.analyses.schedule_table.schedule_table``'s keyword arguments): the EAD
    schedule's range, scale and cap, and the figure's own warm-up, decays and positions (``schedule_figure``)."""
    ead, figure = ead_schedule(config), config["schedule_figure"]
    return {"tau_max": ead["tau_max"], "tau_min": ead["tau_min"], "warmup": figure["warmup"],
            "decay_scale": ead["decay_scale"], "d_max": ead["d_max"], "decays": figure["decays"],
            "max_position": figure["max_position"]}


def schedule_table_args(config: dict) -> str:
    """Fig. 3's schedule table job's flags (:func:`schedule_table_settings`)."""
    return cli_args(schedule_table_settings(config))


def measured_schedule_args(config: dict) -> str:
    """ead.analyses.measured_schedule: the hand-sized EAD schedule (:func:`ead_schedule`) it sizes c and d0 against,
    and the sizing rule (``measured_schedule``)."""
    spec = config["measured_schedule"]
    options = {key: spec[key] for key in ("entropy_fraction", "window", "length_quantile", "floor_fraction",
                                          "max_position")}
    return f"--ead {json_arg(ead_schedule(config))} {cli_args(options)}"


# --- the sampling analyses ---------------------------------------------------------------------------------------

def analysis_args(config: dict, analysis: str, model: str) -> str:
    """CLI flags of one analysis job (:func:`ead.settings.analyses.analysis_job_settings`); the model is the job's
    wildcard, so adding a model leaves the others' jobs alone."""
    settings = analysis_job_settings(config, analysis, model)
    if analysis == "majority_scaling":
        schedules = [json.dumps(spec, sort_keys=True) for spec in settings.pop("samplers")]
        return f"{cli_args(settings)} --schedules {' '.join(shlex.quote(s) for s in schedules)} {grader_arg(config)}"
    if analysis == "entropy_by_position":  # it grades nothing
        return cli_args(settings)
    return f"{cli_args(settings)} {grader_arg(config)}"


def analysis_claims_params(config: dict) -> dict:
    """ead.claims.analyses's params: the claims of Figs. 1, 2 and 9 and their bootstrap."""
    return {"claims": json_arg(config["analyses"]["claims"]), "resamples": config["claims_bootstrap"],
            "seed": config["stats"]["seed"]}


# --- the inference-only comparison (overlay inference_only.yaml) -------------------------------------------------

def inference_only_eval_args(config: dict, sampler: str, split: str) -> str:
    """ead.evaluation of one (model, split, sampler) of the comparison: its sizes, the split and the sampler's
    schedule."""
    spec = config["inference_only"]
    options = {key: spec[key] for key in ("limit", "n", "k", "max_new_tokens", "seed", "batch_size")}
    schedule = json_arg(inference_only_schedule(config, sampler))
    return f"{cli_args(options)} --split {shlex.quote(split)} --schedule {schedule} {grader_arg(config)}"


def inference_only_table_args(config: dict) -> str:
    """ead.analyses.inference_only: each sampler's family, the baseline, the splits, the selection metric and the
    bootstrap."""
    spec = config["inference_only"]
    families = {name: sampler["name"] for name, sampler in spec["samplers"].items()}
    return (f"--families {json_arg(families)} "
            + cli_args({"k": spec["k"], "baseline": spec["baseline"], "select_split": spec["select_split"],
                        "report_split": spec["report_split"], "select_metric": spec["select_metric"],
                        "resamples": config["claims_bootstrap"], "seed": spec["seed"]}))


# --- RL results (either backend) ---------------------------------------------------------------------------------

def rl_tables_args(config: dict) -> str:
    """ead.rl.aggregate: the reported k and the bootstrap's seed (``stats.seed``)."""
    return cli_args({"k": config["rl"]["eval"]["k"], "seed": config["stats"]["seed"]})


def cell_eval_args(config: dict) -> str:
    """ead.rl.cell_eval: a cell's eval.csv at the reported k (its CIs drawn with the evaluation's seed), from a table
    that holds every evaluation step the cell's budget declares (:func:`completeness_args`)."""
    return cli_args({"k": config["rl"]["eval"]["k"], "seed": config["rl"]["eval"]["seed"]}) + " " + \
        completeness_args(config)


def paired_curves_args(config: dict) -> str:
    """ead.rl.paired: every sampler minus each paired baseline, with the claims' bootstrap."""
    return cli_args({"baselines": config["paired_baselines"], "k": config["rl"]["eval"]["k"],
                     "resamples": config["claims_bootstrap"], "seed": config["stats"]["seed"]})


def completeness_args(config: dict) -> str:
    """The extent every RL cell's tables must hold (ead.rl.cells), as the cells' documents declare it: their budget's
    steps and their evaluation group's ``every`` and ``own_sampler`` (:func:`ead.settings.rl.cell_budget`,
    :func:`ead.settings.evaluation.cell_evaluation`, the groups each cell's job reads). ead.rl.aggregate and
    ead.claims.rl refuse a cell that lacks a step 1..steps or an evaluation step, naming its file."""
    steps, evaluation = cell_budget(config["rl"]).steps, cell_evaluation(config["rl"])
    own_sampler = "--own-sampler" if evaluation.own_sampler else "--no-own-sampler"
    return f"--expect-steps {steps} --eval-every {evaluation.every} {own_sampler}"


def claims_params(config: dict) -> dict:
    """ead.claims.rl's params: the claims (after claim_defaults and rl.run), their window and bootstrap, and the
    cells' completeness."""
    return {"claims": json_arg(config["claims"]), "window": config["claims_window"],
            "resamples": config["claims_bootstrap"], "seed": config["stats"]["seed"],
            "completeness": completeness_args(config)}


def rl_learns_args(config: dict) -> str:
    """ead.claims.rl_learns (premise G4): its sampler, metric and thresholds (config ``rl_learns``), the claims'
    bootstrap and the cells' completeness (a cell cut short would pass an earlier step off as its last)."""
    return (cli_args({**config["rl_learns"], "resamples": config["claims_bootstrap"], "seed": config["stats"]["seed"]})
            + " " + completeness_args(config))


def breakdown_args(config: dict) -> str:
    """ead.rl.breakdown: ``rl.breakdown``'s phases, training metrics, data column and evaluation metric, the claims'
    bootstrap and the cells' completeness."""
    return (cli_args({**breakdown_settings(config), "resamples": config["claims_bootstrap"],
                      "seed": config["stats"]["seed"]}) + " " + completeness_args(config))


# --- the summary -------------------------------------------------------------------------------------------------

def rerun_command(configfiles: list[str], overrides: dict) -> str:
    """The ``snakemake`` command that made a run and refreshes it: its ``--configfile`` files (relative to the
    workflow) and ``--config`` pairs, as the summary tells its reader (a smoke summary names configs/smoke.yaml)."""
    command = "snakemake --cores all"
    if configfiles:
        command += " --configfile " + " ".join(configfiles)
    if overrides:
        command += " --config " + " ".join(
            shlex.quote(f"{key}={value if isinstance(value, str) else json.dumps(value)}")
            for key, value in overrides.items())
    return command
