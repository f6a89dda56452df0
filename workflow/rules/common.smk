# Shared Python of the workflow: config loading (ead.settings.load_workflow_config), wildcard constraints, the final
# targets and shared helpers; every job's arguments come from ead.settings.arguments. The figure registry is ead.workflow.FIGURES (imported by the tests and benchmarks too); each stage's input
# functions live beside its rules, in <stage>_inputs.smk (Snakemake's linter wants rules and functions apart).
import json
import os
import re
import shlex
import sys
from pathlib import Path

import ead.analyses
import ead.numerics
import ead.plots
import ead.workflow
from ead.data.tasks import synthetic_tasks
from ead.settings import ConfigError, load_workflow_config
from ead.settings.analyses import (ANALYSES, analysis_model_names, analysis_models, analysis_task, claimed_models,
                                   offline_models_analysed, summary_job_settings)
from ead.settings.arguments import (analysis_args, analysis_claims_params, breakdown_args, cache_dir, cell_eval_args,
                                    claims_params, cli_args, completeness_args, evaluation_args,
                                    inference_only_eval_args, inference_only_table_args, json_arg,
                                    measured_schedule_args, paired_curves_args, rerun_command, rl_learns_args,
                                    rl_tables_args, schedule_table_args, synthetic_data_args, wildcard_names)
from ead.settings.policies import (fork_sharpen_settings, fork_sharpened_policies, fork_sharpening, policy_task,
                                   sft_settings, sharpened_policies, sharpening, trained_policies, used_policies)
from ead.settings.premises import premise_data, premise_group_by, premise_settings
from ead.settings.inference_only import inference_only_names, inference_only_schedule
from ead.settings.rl import (CELL_PATTERN, Cell, breakdown_runs, cell_settings, figure_experiment, figure_k,
                             grid_cells, local_verl_models, paper_data_entry, paper_data_instruction,
                             paper_data_is_local, rl_data, rl_learns_pool_runs, rl_learns_runs, rl_task,
                             verl_cell_settings, verl_cell_threads)
from ead.settings.switches import workflow_switches
from ead.settings.schedule_shapes import schedule_shapes_spec, shape_schedules, shape_table_options
from ead.tables import CONFIG_FILES_ENV
from ead.workflow import FIGURES, claim_figures, final_figures, rl_figures

# A misspelt --workflow-profile is ignored by Snakemake without a word (the paper profile's jobs would run locally).
WORKFLOW_PROFILE_REFUSAL = ead.workflow.workflow_profile_refusal(sys.argv, workflow.basedir)
if WORKFLOW_PROFILE_REFUSAL:
    print(f"Config error: {WORKFLOW_PROFILE_REFUSAL}", file=sys.stderr)
    sys.exit(1)

try:
    # configs/config.yaml, the --configfile files in order (each with its include: layers; key+: extends a list), then
    # --config overrides (docs/operations.md, "Changing an experiment"): layered once here by ead.settings, which
    # remembers the file that set each value, so an error names it; Snakemake's own merge of the overlays is replaced.
    LAYERED = load_workflow_config(workflow.basedir, workflow.config_settings.configfiles,
                                   dict(workflow.config_settings.config or {}), sys.argv)
except ConfigError as error:
    # One line naming the file, the key and the value; a traceback would bury it.
    print(f"Config error: {error}", file=sys.stderr)
    sys.exit(1)
config.clear()
config.update(LAYERED.config)

# Each profile writes under its own root, so running one profile never replaces another's results: the default
# profile keeps results/ and figures/ at the top; every other profile (`profile:` in its file, or
# `--config profile=<name>`) works in runs/<profile>/ (its results/, figures/, logs and Snakemake metadata).
# The Snakefile makes it the working directory (`workdir:`); paths in the rules stay relative to it.
# What the rule files decide at parse time (profile, kernels, backend, optional parts), read once
# (ead.settings.switches).
SWITCHES = workflow_switches(config)
PROFILE = SWITCHES.profile
OUTPUT_ROOT = SWITCHES.output_root
# The wheel cache is shared by every profile: a relative cache_dir means the checkout's, wherever the run's root is.
CACHE_DIR = cache_dir(config, OUTPUT_ROOT)
# Jobs read the profile that made them from the environment and record it in every table and figure (ead.tables,
# ead.plots.style).
os.environ["EAD_PROFILE"] = PROFILE
# Every job's CPU kernels at the declared level (numerics.cpu_level, ead.numerics), set before any job starts: at a
# level, the same commit gives the same bits on every x86 machine that has it; each torch job checks it (pin_job).
os.environ.update(ead.numerics.job_environment(SWITCHES.cpu_level))
# Torch threads of each CPU torch job (numerics.threads): part of the declaration, not the cores Snakemake was given.
JOB_THREADS = SWITCHES.job_threads
# ... and the config files layered over configs/config.yaml (profile, overlays, includes), so a table tells which
# overlay produced it (ead.tables.CONFIG_FILES_COLUMN).
# Relative to the workflow, so a job that re-reads the config elsewhere (a cluster job, given absolute paths) records
# the same names as a local run.
os.environ[CONFIG_FILES_ENV] = " ".join(
    os.path.relpath(Path(path).resolve(), Path(workflow.basedir).resolve()) for path in LAYERED.files[1:])

# Jobs call `python`: put the interpreter running Snakemake first on PATH so that jobs use the same
# environment (and its installed `ead` package) even when the venv is not activated.
os.environ["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])

# Which trainer runs the RL grid: cpu (tiny `policies`, workflow/rules/rl_cpu.smk) or verl (the hub models of
# `paper_models` on GPUs, workflow/rules/rl_verl.smk; the paper profile). The config check guarantees that every
# experiment's policies belong to the backend's set.
RL_BACKEND = SWITCHES.rl_backend
# A cell's path below results/, for its log and benchmark files (results/logs/rl/..., results/benchmarks/rl/...).
CELL_SUBPATH = CELL_PATTERN.removeprefix("results/")

# The software environment of every rule (used with --software-deployment-method conda).
CONDA_ENV = "../../environment.yml"
# Which ready job runs first: the critical path (the tiny policies' data, SFT and sharpening, the RL step-0
# evaluation, the RL cells, most of the run's work) before the sampling analyses, which fill the other core. Snakemake
# picks among ready jobs by priority; without these it started the RL grid only at minute 29 of 65 (TESTBED.md).
CRITICAL_PATH_PRIORITY = {"data": 50, "models": 50, "rl_step_0": 40, "rl_cells": 30, "premises": 20}

FIGURE_FORMATS = ["png", "pdf"]


def name_pattern(names):
    """A wildcard constraint matching exactly one of ``names`` (a never-matching pattern for none)."""
    return "|".join(map(re.escape, names)) or "(?!)"


wildcard_constraints:
    fmt="png|pdf",
    n=r"\d+",
    seed=r"\d+",
    analysis_model=name_pattern(analysis_model_names(config)),
    **{wildcard: name_pattern(names) for wildcard, names in wildcard_names(config).items()},


def figure_paths(name):
    """Both renderings of one figure; plot rules output these."""
    return {fmt: f"figures/{name}.{fmt}" for fmt in FIGURE_FORMATS}


def figure_outputs(name, caption=None):
    """A plot rule's outputs: both renderings, the PNG marked for `snakemake --report` with its caption
    (workflow/report/<caption or name>.rst, a path relative to workflow/rules/ where the rules are)."""
    paths = figure_paths(name)
    caption = f"../report/{caption or name}.rst"
    return {"png": report(paths["png"], caption=caption, category="Figures"), "pdf": paths["pdf"]}


def plot_code(figure, shared=("style.py",)):
    """The plotting code a figure's rule runs (its module and the shared modules of ead.plots), as inputs of the plot
    rule: editing a figure's look re-renders it (by modification time) and reruns nothing else. The files are those
    of the `ead` package the jobs import (the one imported here)."""
    plots = Path(ead.plots.__file__).parent
    return [str(plots / name) for name in [f"{figure}.py", *shared]]


def get_plot_code(wildcards):
    """The code of an RL figure, the {figure} wildcard of rl_figure: its job (ead.plots.rl_figure), the RL curves and
    the style, and what says what it draws: the figure registry for a figure of registry panels
    (ead.workflow.FIGURES), else its own module."""
    shared = ("rl_figure.py", "rl_curves.py", "style.py")
    if FIGURES[wildcards.figure].panels is not None:
        return [str(Path(ead.plots.__file__).parent / name) for name in shared] + [ead.workflow.__file__]
    return plot_code(wildcards.figure, shared=shared)


def get_final_figures():
    """Every figure `rule all` renders (from ead.workflow.FIGURES, the analyses', Fig. 3, the RL figures of the experiments
    that run, the claims forest plots some claim names, an overlay's figures). A figure joins the registry only once
    its pipeline is real."""
    return [path for name in final_figures(config) for path in figure_paths(name).values()]


def get_final_tables():
    """Result tables and models `rule all` also produces (data, models, base-model evaluation), of what the run uses
    only (the real benchmarks and the offline model when an analysis lists that model; the RL grid's task table; the
    policies it uses, whose SFT reads their tasks' tables), so an overlay that runs other policies makes none of the
    default's.

    The paper profile (rl.backend: verl) runs on GPUs and does not need the CPU profile's offline data and tiny models.
    """
    if RL_BACKEND == "verl":
        return []
    offline = offline_models_analysed(config)
    datasets = [f"results/data/{name}.parquet" for name in SWITCHES.real_datasets] if offline else []
    return datasets + [rl_data(config)] + [
        f"results/models/{model}" for model in offline
    ] + [  # every model the run uses is a target: a failed job deletes its output, and a missing model must be rebuilt
        f"results/models/{policy}"
        for policy in trained_policies(config) + sharpened_policies(config) + fork_sharpened_policies(config)
        if policy in used_policies(config)
    ] + get_base_eval_tables() + get_premise_outputs() + get_cell_outputs("eval")  # eval.csv: rule rl_cell_eval


def get_base_eval_tables():
    """The base evaluation of every tiny policy the run uses (ead.settings.policies.used_policies: an overlay that
    runs other policies than the default's evaluates only its own; CPU profiles, the paper profile's hub policies have
    none)."""
    if RL_BACKEND == "verl":
        return []
    return [f"results/eval/{policy}_base.csv" for policy in used_policies(config)]


def get_eval_args(evaluation):
    """CLI flags of a policy evaluation (python -m ead.evaluation): base_eval ("base") or rl.eval ("rl_base")."""
    return evaluation_args(config, evaluation)


def wildcards_cell(wildcards):
    """The RL grid cell of a job's wildcards (both backends' cell rules)."""
    return Cell(wildcards.policy, wildcards.algorithm, wildcards.sampler, int(wildcards.n), int(wildcards.seed))


def get_rerun_command():
    """The command of this run, for the summary's reader: the --configfile files relative to the workflow (a cluster
    job re-reads them as absolute paths) and the --config pairs."""
    files = [os.path.relpath(Path(path).resolve(), Path(workflow.basedir).resolve())
             for path in workflow.config_settings.configfiles]
    return rerun_command(files, dict(workflow.config_settings.config or {}))
