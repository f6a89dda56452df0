# The sampling analyses' input functions (rules in analyses.smk, which includes this file).


# summary table (results/analyses/<summary>/<model>.csv, made by rule analysis_summary) -> the job whose samples it
# reads: each job's own summary, and the entropy by token role of a tiny policy's countdown responses
SUMMARY_SOURCES = {**{name: name for name in ANALYSES}, "entropy_by_role": "entropy_by_position"}


def get_analysis_model(wildcards):
    """Where an analysis model lives: the offline SmolLM2 (rule smollm2), a tiny policy (rules sft, sharpen) or a hub
    model (rule paper_model)."""
    name = wildcards.analysis_model
    if name in SWITCHES.paper_models:
        return f"results/paper/models/{name}"
    return f"results/models/{name}"


def get_analysis_tables(analysis):
    """Input function factory: the result table of every model of an analysis (its figure's input)."""

    def get_tables(wildcards):
        return [f"results/analyses/{analysis}/{model}.csv" for model in analysis_models(config, analysis)]

    return get_tables


def get_figure_tables(analysis):
    """Input function factory: the tables an analysis' figure draws (get_analysis_tables); an analysis that lists no
    model has no figure (ead.workflow.FIGURES leaves it out of `rule all`), and asking for it is refused here, when the
    DAG is built, naming the key."""

    def get_tables(wildcards):
        tables = get_analysis_tables(analysis)(wildcards)
        if not tables:
            raise ValueError(f"analyses.{analysis}.models is empty: this config analyses no model, so the figure of "
                             f"{analysis} has nothing to draw")
        return tables

    return get_tables


def get_role_tables(wildcards):
    """The entropy-by-role table of every tiny policy of analyses.entropy_by_position (roles are countdown's; Fig. 1,
    right)."""
    return [f"results/analyses/entropy_by_role/{model}.csv" for model in analysis_models(config, "entropy_by_position")
            if analysis_task(config, "entropy_by_position", model) == "countdown"]


def get_analysis_data(analysis):
    """Input function factory: the data table of an analysis job, by its model's task (ead.settings.analyses.analysis_task)."""

    def get_data(wildcards):
        return f"results/data/{analysis_task(config, analysis, wildcards.analysis_model)}.parquet"

    return get_data


def get_analysis_args(analysis):
    """Input function factory: CLI flags of one analysis job (ead.settings.arguments.analysis_args)."""

    def get_args(wildcards):
        return analysis_args(config, analysis, wildcards.analysis_model)

    return get_args


def get_summary_samples(wildcards):
    """The samples table a summary table is made from (SUMMARY_SOURCES)."""
    return f"results/analyses/{SUMMARY_SOURCES[wildcards.analysis]}/{wildcards.analysis_model}_samples.parquet"


def get_summary_code(wildcards):
    """The code a summary table is computed with (the analysis module, the summary job and their shared helpers), an
    input of rule analysis_summary, so editing it re-summarises (seconds) and never resamples (the compute rules do not
    depend on it)."""
    analyses = Path(ead.analyses.__file__).parent
    return [str(analyses / f"{name}.py") for name in (SUMMARY_SOURCES[wildcards.analysis], "summary_tables", "common")]


def get_summary_args(wildcards):
    """CLI flags of an analysis' summary job (ead.settings.analyses.summary_job_settings)."""
    return cli_args(summary_job_settings(config, SUMMARY_SOURCES[wildcards.analysis], wildcards.analysis_model))


def get_analysis_claim_samples(analysis):
    """Input function factory: the samples tables of the models that analyses.claims tests in an analysis."""

    def get_samples(wildcards):
        return [f"results/analyses/{analysis}/{model}_samples.parquet" for model in claimed_models(config, analysis)]

    return get_samples


def get_analysis_claims_table():
    """The analyses' claims table, an input of rule claims when analyses.claims has claims (else none)."""
    return ["results/analyses/claims.csv"] if any(claimed_models(config, analysis) for analysis in ANALYSES) else []
