# Sampling analyses: entropy by position (Fig. 1), forking (Fig. 2), Maj@N (Fig. 9), one job per (analysis, model).
# The default profile runs SmolLM2-135M-Instruct (chain-of-thought benchmarks) and the tiny policies (their own task,
# countdown; ead.settings.analyses.analysis_model_settings) on CPU with transformers; the paper profile runs the paper's hub
# models with vLLM (analyses.engine, configs/paper.yaml). Compute rules sample and grade and write
# results/analyses/<analysis>/<model>_samples.parquet; rule analysis_summary turns each into the tidy summary table
# results/analyses/<analysis>/<model>.csv with bootstrap CIs (so analyses.bootstrap and forking's k never resample),
# and a tiny policy's entropy samples also into results/analyses/entropy_by_role/<model>.csv; plot rules read those
# summary tables only (one curve or panel per model). Rule analysis_claims tests analyses.claims (Figs. 1, 2, 9) on
# the samples; rule claims (rl.smk) adds its rows to results/claims.csv.


include: "analyses_inputs.smk"


# One rule per analysis, named as it (ead.settings.analyses.ANALYSES): each runs its own job, python -m
# ead.analyses.<analysis>, on every model of analyses.<analysis>.models; one definition, so they differ only in that name.
# The analysis is a wildcard each rule fixes to its own name: Snakemake evaluates a shell command when its job runs (the
# loop variable is then the last analysis), while a wildcard is the job's own.
for analysis in ANALYSES:

    rule:
        name:
            analysis
        input:
            model=get_analysis_model,
            data=get_analysis_data(analysis),
        output:
            samples="results/analyses/{analysis}/{analysis_model}_samples.parquet",
        wildcard_constraints:
            analysis=analysis,
        params:
            args=get_analysis_args(analysis),
        log:
            "results/logs/analyses/{analysis}/{analysis_model}.log",
        benchmark:
            "results/benchmarks/analyses/{analysis}/{analysis_model}.tsv"
        conda:
            CONDA_ENV
        shell:
            "python -m ead.analyses.{wildcards.analysis} --model {input.model} --data {input.data} {params.args}"
            " --samples-out {output.samples} > {log} 2>&1"


rule analysis_summary:
    input:
        samples=get_summary_samples,
        code=get_summary_code,
    output:
        table="results/analyses/{analysis}/{analysis_model}.csv",
    params:
        args=get_summary_args,
    wildcard_constraints:
        analysis=name_pattern(SUMMARY_SOURCES),
    log:
        "results/logs/analyses/{analysis}/{analysis_model}_summary.log",
    conda:
        CONDA_ENV
    shell:
        "python -m ead.analyses.summary_tables --analysis {wildcards.analysis} --samples {input.samples} {params.args}"
        " --out {output.table} > {log} 2>&1"


rule analysis_claims:
    input:
        entropy_by_position=get_analysis_claim_samples("entropy_by_position"),
        forking=get_analysis_claim_samples("forking"),
        majority_scaling=get_analysis_claim_samples("majority_scaling"),
    output:
        table="results/analyses/claims.csv",
    params:
        **analysis_claims_params(config),
    log:
        "results/logs/analyses/claims.log",
    conda:
        CONDA_ENV
    shell:
        "python -m ead.claims.analyses --claims {params.claims}"
        " --entropy-by-position-samples {input.entropy_by_position} --forking-samples {input.forking}"
        " --majority-scaling-samples {input.majority_scaling} --resamples {params.resamples}"
        " --seed {params.seed} --out {output.table}"
        " > {log} 2>&1"


rule fig01_entropy_by_position:
    input:
        tables=get_figure_tables("entropy_by_position"),
        roles=get_role_tables,
        code=plot_code("fig01_entropy_by_position"),
    output:
        **figure_outputs("fig01_entropy_by_position"),
    log:
        "results/logs/figures/fig01_entropy_by_position.log",
    conda:
        CONDA_ENV
    shell:
        "python -m ead.plots.fig01_entropy_by_position --tables {input.tables} --role-tables {input.roles}"
        " --png {output.png} --pdf {output.pdf} > {log} 2>&1"


rule fig02_forking:
    input:
        tables=get_figure_tables("forking"),
        code=plot_code("fig02_forking"),
    output:
        **figure_outputs("fig02_forking"),
    log:
        "results/logs/figures/fig02_forking.log",
    conda:
        CONDA_ENV
    shell:
        "python -m ead.plots.fig02_forking --tables {input.tables} --png {output.png} --pdf {output.pdf} > {log} 2>&1"


rule fig09_majority_scaling:
    input:
        tables=get_figure_tables("majority_scaling"),
        code=plot_code("fig09_majority_scaling"),
    output:
        **figure_outputs("fig09_majority_scaling"),
    log:
        "results/logs/figures/fig09_majority_scaling.log",
    conda:
        CONDA_ENV
    shell:
        "python -m ead.plots.fig09_majority_scaling --tables {input.tables}"
        " --png {output.png} --pdf {output.pdf} > {log} 2>&1"
