# The RL stage's figure registry and input functions, for rl.smk (aggregation, figures) and the backend's cell rules
# (rl_cpu.smk or rl_verl.smk); each of those files includes this one (Snakemake reads it once).


# RL training figures -> the rl.experiments entry each one draws (all rendered by rule rl_figure).
# Claim figures beyond the paper's, drawn by claims_figure in rl.smk: a forest plot of every claim with this `figure`.
CLAIM_FIGURES = ["beyond", "d_max", "measured"]
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
# RL figures of experiments an overlay adds (configs/ablations/beyond_the_paper.yaml, d_max_sweep.yaml): in rule all
# when it is defined.
OVERLAY_RL_FIGURES = {"beyond_off_policy_cost": "beyond", "d_max_sweep": "d_max_sweep"}
# Figures drawn by a plot rule of their own, in the final targets when the config has their key (an overlay's key)
# -> the figure's name mapped to that config key.
CONFIG_KEY_FIGURES = {"schedule_shapes": "schedule_shapes", "inference_only": "inference_only"}


def get_cell_outputs(table, experiments=None):
    """One table (steps / eval / eval_problems) of every cell of the named experiments (default: the grid)."""
    return [f"{cell.directory}/{table}.csv" for cell in expand_grid(config["rl"], experiments)]


def get_figure_experiment(wildcards):
    """The experiment (cells) an RL figure draws, as shell-quoted JSON."""
    experiment = {**RL_FIGURES, **OVERLAY_RL_FIGURES}[wildcards.figure]
    if experiment not in config["rl"]["experiments"]:
        raise ValueError(f"figure {wildcards.figure} draws rl.experiments.{experiment}, which the config does not define")
    return shlex.quote(json.dumps(config["rl"]["experiments"][experiment], sort_keys=True))


# --- CPU cells (rl_cpu.smk) ---
def get_cell_settings(wildcards):
    """The one JSON document a grid cell's training job reads (a change to it reruns exactly that cell; it has no
    rl.eval.k, see ead.settings.rl.cell_settings)."""
    return shlex.quote(json.dumps(cell_settings(config, wildcards_cell(wildcards)), sort_keys=True))


def get_measured_schedule_input(wildcards):
    """A cell whose sampler is `measured: true` reads its policy's measured schedule (ead.analyses.measured_schedule)."""
    if config["rl"]["samplers"][wildcards.sampler].get("measured"):
        return [f"results/schedule/measured_{wildcards.policy}.csv"]
    return []


def get_measured_schedule_arg(wildcards):
    return " ".join(f"--measured-schedule {path}" for path in get_measured_schedule_input(wildcards))


# --- verl cells (rl_verl.smk) ---
def get_paper_data_spec(wildcards):
    """One paper_data entry (train or val), as shell-quoted JSON."""
    return shlex.quote(json.dumps(config["paper_data"][wildcards.role], sort_keys=True))


def get_verl_cell_config(wildcards):
    """The part of the config that determines this cell (a JSON string): editing another cell's settings
    or an unrelated experiment leaves this job's params, and so its results, untouched."""
    return shlex.quote(json.dumps(cell_config(config, wildcards_cell(wildcards)), sort_keys=True))


# --- the schedule-shapes figure (config `schedule_shapes`) ---
def get_shape_schedules(wildcards):
    """sampler -> the schedule its cells sample with, for the shapes the figure draws (shell-quoted JSON)."""
    return shlex.quote(json.dumps({s: sampler_schedule(config, s) for s in config["schedule_shapes"]["samplers"]},
                                  sort_keys=True))


def get_shape_table_args(wildcards):
    spec = config["schedule_shapes"]
    return cli_args({"steps": spec["steps"], "max_position": spec["max_position"]})


def get_shape_spec(wildcards):
    return shlex.quote(json.dumps(config["schedule_shapes"], sort_keys=True))


def get_completeness_args():
    """The extent every RL cell's tables must hold (ead.rl.cells): ead.rl.aggregate and ead.rl.compare refuse a cell
    that lacks a step 1..rl.steps or an evaluation step, naming its file."""
    evaluation = config["rl"]["eval"]
    own_sampler = "--own-sampler" if evaluation.get("own_sampler", False) else "--no-own-sampler"
    return f"--expect-steps {config['rl']['steps']} --eval-every {evaluation['every']} {own_sampler}"
