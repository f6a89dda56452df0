# The RL stage's input functions (the figure registry is ead.workflow.FIGURES), for rl.smk (aggregation, figures) and the backend's cell rules
# (rl_cpu.smk or rl_verl.smk); each of those files includes this one (Snakemake reads it once).


def get_cell_outputs(table, experiments=None):
    """One table (steps / eval / eval_problems) of every cell of the named experiments (default: the grid)."""
    return [f"{cell.directory}/{table}.csv" for cell in grid_cells(config, experiments)]


def get_failure_tables():
    """Every cell's eval_failures.csv (its evaluations' samples by first mistake), which the CPU backend's cells write;
    none for verl's cells (the breakdown then has no failure shares)."""
    return get_cell_outputs("eval_failures") if RL_BACKEND == "cpu" else []


def get_rl_learns_table():
    """Premise G4's table when the config has `rl_learns` and the grid runs its sampler (else none: the claims' column
    reads empty)."""
    return ["results/premises/rl_learns.csv"] if rl_learns_runs(config) else []


def get_rl_learns_pool_output():
    """G4's verdict on the cells' fixed training pool (rl.train_pool: its own table, read by the pool's claims), as a
    named output of the G4 job; none without a pool."""
    return {"train_pool": "results/premises/rl_learns_train_pool.csv"} if rl_learns_pool_runs(config) else {}


def get_breakdown_table(table):
    """One table of the breakdown (``signal``, by training phase, or ``groups``, by data column) when the config has
    ``rl.breakdown`` (else none)."""
    return [getattr(rules.rl_breakdown.output, table)] if breakdown_runs(config) else []


def get_breakdown_args(wildcards):
    """ead.rl.breakdown's flags (ead.settings.arguments.breakdown_args; only a run with ``rl.breakdown`` asks)."""
    return breakdown_args(config)


def get_figure_experiment(wildcards):
    """The experiment (cells) an RL figure draws, as shell-quoted JSON."""
    return json_arg(figure_experiment(config, wildcards.figure, rl_figures()[wildcards.figure]))


# --- CPU cells (rl_cpu.smk) ---
def get_cell_settings(wildcards):
    """The one JSON document a grid cell's training job reads (ead.settings.cell; a change to it reruns exactly that
    cell; it has no rl.eval.k, see ead.settings.evaluation.cell_evaluation)."""
    return shlex.quote(cell_settings(config, wildcards_cell(wildcards)).to_json())


def get_measured_schedule_input(wildcards):
    """A cell whose sampler is `measured: true` reads its policy's measured schedule (ead.analyses.measured_schedule)."""
    if cell_settings(config, wildcards_cell(wildcards)).training.measured:
        return [f"results/schedule/measured_{wildcards.policy}.csv"]
    return []


def get_measured_schedule_arg(wildcards):
    return " ".join(f"--measured-schedule {path}" for path in get_measured_schedule_input(wildcards))


# --- verl cells (rl_verl.smk) ---
def get_paper_data_spec(wildcards):
    """One paper_data entry (train or val), as shell-quoted JSON."""
    return json_arg(paper_data_entry(config, wildcards.role))


def get_verl_cell_settings(wildcards):
    """The cell's resolved document (ead.settings.rl.verl_cell_settings, a JSON string): editing another cell's
    settings or an unrelated experiment leaves this job's params, and so its results, untouched."""
    return shlex.quote(verl_cell_settings(config, wildcards_cell(wildcards)).to_json())


# --- the schedule-shapes figure (config `schedule_shapes`) ---
def get_shape_schedules(wildcards):
    """sampler -> the schedule its cells sample with, for the shapes the figure draws (shell-quoted JSON)."""
    return json_arg(shape_schedules(config))


def get_shape_table_args(wildcards):
    return cli_args(shape_table_options(config))


def get_shape_spec(wildcards):
    return json_arg(schedule_shapes_spec(config))
