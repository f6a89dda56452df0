# The sampling analyses' figure registry and input functions (rules in analyses.smk, which includes this file).


ANALYSIS_FIGURES = ["fig01_entropy_by_position", "fig02_forking", "fig09_majority_scaling"]
# config sub-section -> the job (and table name) that runs it
ANALYSES = {"entropy": "entropy_by_position", "forking": "forking", "majority": "majority_scaling"}
# Settings of a sub-section that only its summary job uses (analysis_summary, beside analyses.bootstrap); changing
# them re-summarises the samples and never resamples.
SUMMARY_SETTINGS = {"forking": ["k"]}


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
    """CLI flags of one analysis job: its config sub-section plus the shared engine/threads, task = dataset.

    The model is the job's wildcard, so the list of models is not a flag (adding a model leaves the others alone).
    The summary settings (analyses.bootstrap, SUMMARY_SETTINGS) are not flags: rule analysis_summary takes them.
    """
    analyses = config["analyses"]
    settings = {key: value for key, value in analyses[section].items()
                if key not in ("models", "dataset", *SUMMARY_SETTINGS.get(section, []))}
    settings.update(task=analyses[section]["dataset"], threads=analyses["threads"], engine=analyses["engine"],
                    dtype=analyses["dtype"])
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


def get_summary_args(wildcards):
    """CLI flags of an analysis' summary job (python -m ead.analyses.summarise): analyses.bootstrap, the bootstrap
    seed (the sub-section's seed, as the analysis job itself uses) and the sub-section's SUMMARY_SETTINGS."""
    section = next(section for section, name in ANALYSES.items() if name == wildcards.analysis)
    settings = {key: config["analyses"][section][key] for key in ["seed", *SUMMARY_SETTINGS.get(section, [])]}
    return cli_args({**settings, "bootstrap": config["analyses"]["bootstrap"]})
