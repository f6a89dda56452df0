# All Python of the workflow: config validation, the output grid, input functions and CLI helpers.
import json
import os
import re
import shlex
import sys
from pathlib import Path

from ead.config import ConfigError, analysis_model_names, analysis_schedule, validate_config
from ead.rl.grid import CELL_PATTERN, Cell, cell_config, cell_settings, expand_grid

try:
    validate_config(config, Path(workflow.basedir) / "workflow" / "schemas" / "config.schema.yaml")
except ConfigError as error:
    # One line naming the key and value; a traceback would bury it.
    print(f"Config error: {error}", file=sys.stderr)
    sys.exit(1)

# Jobs call `python`: put the interpreter running Snakemake first on PATH so that jobs use the same
# environment (and its installed `ead` package) even when the venv is not activated.
os.environ["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])

# Which trainer runs the RL grid: cpu (tiny `policies`, workflow/rules/rl_cpu.smk) or verl (the hub models of
# `paper_models` on GPUs, workflow/rules/rl_verl.smk; the paper profile). The config check guarantees that every
# experiment's policies belong to the backend's set.
RL_BACKEND = config["rl"]["backend"]
RL_POLICIES = config["paper_models"] if RL_BACKEND == "verl" else config["policies"]
# A cell's path below results/, for its log and benchmark files (results/logs/rl/..., results/benchmarks/rl/...).
CELL_SUBPATH = CELL_PATTERN.removeprefix("results/")

# The software environment of every rule (used with --software-deployment-method conda).
CONDA_ENV = "../../environment.yml"

FIGURE_FORMATS = ["png", "pdf"]

# RL training figures -> the rl.experiments entry each one draws (all rendered by rule rl_figure).
RL_FIGURES = {
    "fig04_pass_worst_at_16": "main",
    "fig05_larger_model": "larger_model",
    "fig06_entropy_dynamics": "main",
    "fig07_rollout_scaling": "rollout_scaling",
    "fig08_rollout_n_comparison": "rollout_scaling",
    "fig10_algorithms": "algorithms",
    "fig11_off_policy": "off_policy",
    "fig12_response_length": "main",
}


wildcard_constraints:
    fmt="png|pdf",
    policy="|".join(map(re.escape, RL_POLICIES)),
    figure="|".join(RL_FIGURES),
    algorithm="|".join(map(re.escape, config["rl"]["algorithms"])),
    sampler="|".join(map(re.escape, config["rl"]["samplers"])),
    n=r"\d+",
    seed=r"\d+",
    analysis_model="|".join(map(re.escape, analysis_model_names(config))),
    hub_model="|".join(map(re.escape, config.get("paper_models", {}))) or "(?!)",


def figure_paths(name):
    """Both renderings of one figure; plot rules output these."""
    return {fmt: f"figures/{name}.{fmt}" for fmt in FIGURE_FORMATS}


def get_final_figures():
    """Every figure `rule all` renders. A figure joins this list only once its pipeline is real."""
    figures = ["fig03_annealing_schedule", *ANALYSIS_FIGURES, *RL_FIGURES]
    return [path for name in figures for path in figure_paths(name).values()]


def get_final_tables():
    """Result tables and models `rule all` also produces (data, models, base-model evaluation).

    The paper profile (rl.backend: verl) runs on GPUs and does not need the CPU profile's offline data and tiny models.
    """
    if RL_BACKEND == "verl":
        return []
    datasets = [f"results/data/{name}.parquet" for name in config["data"]["real"]]
    return datasets + [
        "results/data/countdown.parquet",
        "results/models/smollm2-135m-instruct",
    ] + get_base_eval_tables()


def get_base_eval_tables():
    """The base evaluation of every tiny policy (CPU profiles; the paper profile's hub policies have none)."""
    if RL_BACKEND == "verl":
        return []
    return [f"results/eval/{policy}_base.csv" for policy in config["policies"]]


def get_sft_args(wildcards):
    """CLI flags of one policy's SFT: its shape and its SFT settings."""
    policy = config["policies"][wildcards.policy]
    return cli_args({**policy["shape"], **policy["sft"]})


def get_grader_arg():
    """The grader settings every grading job receives (config section `grader`), as one --grader JSON flag."""
    return f"--grader {shlex.quote(json.dumps(config['grader'], sort_keys=True))}"


def get_base_eval_args():
    """CLI flags of the tiny policy's base evaluation; the sampler is a fixed temperature, declared in config."""
    settings = dict(config["base_eval"])
    tau = settings.pop("tau")
    schedule = shlex.quote(f'{{"name": "fixed", "tau": {tau}}}')
    return f"{cli_args(settings)} --schedule {schedule} {get_grader_arg()}"


def cli_args(options):
    """Render a mapping as `--key value` CLI flags (lists become repeated values), shell-quoted.

    Keys are sorted so that reordering keys in a config file does not change the params and trigger a rerun.
    """
    parts = []
    for key, value in sorted(options.items()):
        flag = f"--{key.replace('_', '-')}"
        values = value if isinstance(value, (list, tuple)) else [value]
        parts.append(" ".join([flag] + [shlex.quote(str(v)) for v in values]))
    return " ".join(parts)


def get_rl_eval_args():
    """CLI flags of the RL evaluation (fixed held-out set, declared temperature), for the step-0 evaluation."""
    settings = {key: value for key, value in config["rl"]["eval"].items() if key not in ("tau", "every")}
    schedule = shlex.quote(f'{{"name": "fixed", "tau": {config["rl"]["eval"]["tau"]}}}')
    return f"{cli_args(settings)} --schedule {schedule} {get_grader_arg()}"


def get_cell_settings(wildcards):
    """The one JSON document a grid cell's training job reads (a change to it reruns exactly that cell)."""
    cell = Cell(wildcards.policy, wildcards.algorithm, wildcards.sampler, int(wildcards.n), int(wildcards.seed))
    return shlex.quote(json.dumps(cell_settings(config, cell), sort_keys=True))


def get_cell_outputs(table, experiments=None):
    """One table (steps / eval / eval_problems) of every cell of the named experiments (default: the grid)."""
    return [f"{cell.directory}/{table}.csv" for cell in expand_grid(config["rl"], experiments)]


def get_figure_experiment(wildcards):
    """The experiment (cells) an RL figure draws, as shell-quoted JSON."""
    experiment = RL_FIGURES[wildcards.figure]
    if experiment not in config["rl"]["experiments"]:
        raise ValueError(f"figure {wildcards.figure} draws rl.experiments.{experiment}, which the config does not define")
    return shlex.quote(json.dumps(config["rl"]["experiments"][experiment], sort_keys=True))


# Paper profile: hub models (workflow/rules/hub_models.smk) and verl cells (rl.backend: verl; rl_verl.smk).
def get_paper_model_params(wildcards):
    entry = config["paper_models"][wildcards.hub_model]
    return {"hub_id": entry["hub_id"], "revision": entry["revision"]}


def get_paper_data_spec(wildcards):
    return shlex.quote(json.dumps(config["paper_data"][wildcards.role], sort_keys=True))


def get_verl_cell_config(wildcards):
    """The part of the config that determines this cell (a JSON string): editing another cell's settings
    or an unrelated experiment leaves this job's params, and so its results, untouched."""
    cell = Cell(wildcards.policy, wildcards.algorithm, wildcards.sampler, int(wildcards.n), int(wildcards.seed))
    return shlex.quote(json.dumps(cell_config(config, cell), sort_keys=True))


# --- Sampling analyses (workflow/rules/analyses.smk) -------------------------------------------------------
ANALYSIS_FIGURES = ["fig01_entropy_by_position", "fig02_forking", "fig09_majority_scaling"]
# config sub-section -> the job (and table name) that runs it
ANALYSES = {"entropy": "entropy_by_position", "forking": "forking", "majority": "majority_scaling"}


def get_analysis_model(wildcards):
    """Where an analysis model lives: the offline SmolLM2 (rule smollm2) or a hub model (rule paper_model)."""
    name = wildcards.analysis_model
    if name in config.get("paper_models", {}):
        return f"results/paper/models/{name}"
    return f"results/models/{name}"


def get_analysis_tables(section):
    """Input function factory: the result table of every model of an analyses sub-section (its figure's input)."""

    def get_tables(wildcards):
        name = ANALYSES[section]
        return [f"results/analyses/{name}/{model}.csv" for model in config["analyses"][section]["models"]]

    return get_tables


def get_analysis_data(section):
    """Input function factory: the data table of an analyses sub-section."""

    def get_data(wildcards):
        return f"results/data/{config['analyses'][section]['dataset']}.parquet"

    return get_data


def get_analysis_args(section):
    """CLI flags of one analysis job: its config sub-section plus the shared engine/threads/bootstrap, task = dataset.

    The model is the job's wildcard, so the list of models is not a flag (adding a model leaves the others alone).
    """
    analyses = config["analyses"]
    settings = {key: value for key, value in analyses[section].items() if key not in ("models", "dataset")}
    settings.update(task=analyses[section]["dataset"], threads=analyses["threads"], bootstrap=analyses["bootstrap"],
                    engine=analyses["engine"], dtype=analyses["dtype"])
    if analyses["engine"] == "vllm":
        settings["vllm_options"] = json.dumps(analyses["vllm"], sort_keys=True)
    for optional in ("subjects", "max_solution_steps"):
        if settings.get(optional) is None:
            settings.pop(optional, None)
    if section == "majority":
        schedules = [json.dumps(analysis_schedule(config, spec), sort_keys=True) for spec in settings.pop("samplers")]
        return f"{cli_args(settings)} --schedules {' '.join(shlex.quote(s) for s in schedules)} {get_grader_arg()}"
    if section == "entropy":  # the entropy analysis grades nothing
        return cli_args(settings)
    return f"{cli_args(settings)} {get_grader_arg()}"
