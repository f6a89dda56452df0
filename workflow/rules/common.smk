# All Python of the workflow: config validation, the output grid, input functions and CLI helpers.
import json
import os
import shlex
import sys
from pathlib import Path

from ead.config import ConfigError, analysis_schedule, validate_config

try:
    validate_config(config, Path(workflow.basedir) / "workflow" / "schemas" / "config.schema.yaml")
except ConfigError as error:
    # One line naming the key and value; a traceback would bury it.
    print(f"Config error: {error}", file=sys.stderr)
    sys.exit(1)

# Jobs call `python`: put the interpreter running Snakemake first on PATH so that jobs use the same
# environment (and its installed `ead` package) even when the venv is not activated.
os.environ["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])

# The software environment of every rule (used with --software-deployment-method conda).
CONDA_ENV = "../../environment.yml"

FIGURE_FORMATS = ["png", "pdf"]


wildcard_constraints:
    fmt="png|pdf",


def figure_paths(name):
    """Both renderings of one figure; plot rules output these."""
    return {fmt: f"figures/{name}.{fmt}" for fmt in FIGURE_FORMATS}


def get_final_figures():
    """Every figure `rule all` renders. A figure joins this list only once its pipeline is real."""
    figures = ["fig03_annealing_schedule"] + ANALYSIS_FIGURES
    return [path for name in figures for path in figure_paths(name).values()]


def get_final_tables():
    """Result tables and models `rule all` also produces (data, models, base-model evaluation)."""
    datasets = [f"results/data/{name}.parquet" for name in config["data"]["real"]]
    return datasets + [
        "results/data/countdown.parquet",
        "results/models/smollm2-135m-instruct",
        "results/eval/tiny_policy_base.csv",
    ]


def get_base_eval_args():
    """CLI flags of the tiny policy's base evaluation; the sampler is a fixed temperature, declared in config."""
    settings = dict(config["base_eval"])
    tau = settings.pop("tau")
    schedule = shlex.quote(f'{{"name": "fixed", "tau": {tau}}}')
    return f"{cli_args(settings)} --schedule {schedule}"


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


# --- Sampling analyses (workflow/rules/analyses.smk) -------------------------------------------------------
ANALYSIS_FIGURES = ["fig01_entropy_by_position", "fig02_forking", "fig09_majority_scaling"]


def get_analysis_data(section):
    """Input function factory: the data table of an analyses sub-section."""

    def get_data(wildcards):
        return f"results/data/{config['analyses'][section]['dataset']}.parquet"

    return get_data


def get_analysis_args(section):
    """CLI flags of one analysis job: its config sub-section plus the shared threads/bootstrap, task = dataset."""
    settings = dict(config["analyses"][section])
    dataset = settings.pop("dataset")
    settings.update(task=dataset, threads=config["analyses"]["threads"], bootstrap=config["analyses"]["bootstrap"])
    if section == "majority":
        schedules = [json.dumps(analysis_schedule(config, spec), sort_keys=True) for spec in settings.pop("samplers")]
        if settings["max_solution_steps"] is None:
            settings.pop("max_solution_steps")
        return f"{cli_args(settings)} --schedules {' '.join(shlex.quote(s) for s in schedules)}"
    return cli_args(settings)
