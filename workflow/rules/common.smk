# All Python of the workflow: config validation, the output grid, input functions and CLI helpers.
import json
import os
import shlex
import sys
from pathlib import Path

from ead.config import ConfigError, validate_config
from ead.rl_grid import Cell, cell_config, cell_dir, grid_cells

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
    figures = ["fig03_annealing_schedule"]
    return [path for name in figures for path in figure_paths(name).values()]


def get_rl_cell_tables():
    """steps.csv and eval.csv of every RL grid cell (empty when the config has no `rl` section)."""
    if "rl" not in config:
        return []
    return [f"{cell_dir(cell)}/{table}.csv" for cell in grid_cells(config["rl"]) for table in ("steps", "eval")]


def get_final_tables():
    """Result tables and models `rule all` also produces (data, models, base-model evaluation).

    The paper profile (rl.backend: verl) runs on GPUs and does not need the CPU profile's offline data and models.
    """
    if config.get("rl", {}).get("backend") == "verl":
        return []
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


# Paper profile (rl.backend: verl; workflow/rules/rl_verl.smk).
def get_paper_model_params(wildcards):
    entry = config["paper_models"][wildcards.policy]
    return {"hub_id": entry["hub_id"], "revision": entry["revision"]}


def get_paper_data_spec(wildcards):
    return shlex.quote(json.dumps(config["paper_data"][wildcards.role], sort_keys=True))


def get_verl_cell_config(wildcards):
    """The part of the config that determines this cell (a JSON string): editing another cell's settings
    or an unrelated experiment leaves this job's params, and so its results, untouched."""
    cell = Cell(wildcards.policy, wildcards.algorithm, wildcards.sampler, int(wildcards.n), int(wildcards.seed))
    return shlex.quote(json.dumps(cell_config(config, cell), sort_keys=True))
