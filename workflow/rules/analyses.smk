# Sampling analyses with SmolLM2-135M-Instruct: entropy by position (Fig. 1), forking (Fig. 2), Maj@N (Fig. 9).
# Compute rules write tidy tables to results/analyses/; plot rules read them only.


rule entropy_by_position:
    input:
        model=config["analyses"]["model"],
        data=get_analysis_data("entropy"),
    output:
        table="results/analyses/entropy_by_position.csv",
        samples="results/analyses/entropy_samples.parquet",
    params:
        args=get_analysis_args("entropy"),
    log:
        "results/logs/analyses/entropy_by_position.log",
    benchmark:
        "results/benchmarks/analyses/entropy_by_position.tsv"
    conda:
        CONDA_ENV
    shell:
        "python -m ead.analyses.entropy_by_position --model {input.model} --data {input.data} {params.args}"
        " --samples-out {output.samples} --out {output.table} > {log} 2>&1"


rule forking:
    input:
        model=config["analyses"]["model"],
        data=get_analysis_data("forking"),
    output:
        table="results/analyses/forking.csv",
        samples="results/analyses/forking_samples.parquet",
    params:
        args=get_analysis_args("forking"),
    log:
        "results/logs/analyses/forking.log",
    benchmark:
        "results/benchmarks/analyses/forking.tsv"
    conda:
        CONDA_ENV
    shell:
        "python -m ead.analyses.forking --model {input.model} --data {input.data} {params.args}"
        " --samples-out {output.samples} --out {output.table} > {log} 2>&1"


rule majority_scaling:
    input:
        model=config["analyses"]["model"],
        data=get_analysis_data("majority"),
    output:
        table="results/analyses/majority_scaling.csv",
        samples="results/analyses/majority_samples.parquet",
    params:
        args=get_analysis_args("majority"),
    log:
        "results/logs/analyses/majority_scaling.log",
    benchmark:
        "results/benchmarks/analyses/majority_scaling.tsv"
    conda:
        CONDA_ENV
    shell:
        "python -m ead.analyses.majority_scaling --model {input.model} --data {input.data} {params.args}"
        " --samples-out {output.samples} --out {output.table} > {log} 2>&1"


rule fig01_entropy_by_position:
    input:
        table=rules.entropy_by_position.output.table,
    output:
        **figure_paths("fig01_entropy_by_position"),
    log:
        "results/logs/figures/fig01_entropy_by_position.log",
    conda:
        CONDA_ENV
    shell:
        "python -m ead.plots.fig01_entropy_by_position --table {input.table}"
        " --png {output.png} --pdf {output.pdf} > {log} 2>&1"


rule fig02_forking:
    input:
        table=rules.forking.output.table,
    output:
        **figure_paths("fig02_forking"),
    log:
        "results/logs/figures/fig02_forking.log",
    conda:
        CONDA_ENV
    shell:
        "python -m ead.plots.fig02_forking --table {input.table} --png {output.png} --pdf {output.pdf} > {log} 2>&1"


rule fig09_majority_scaling:
    input:
        table=rules.majority_scaling.output.table,
    output:
        **figure_paths("fig09_majority_scaling"),
    log:
        "results/logs/figures/fig09_majority_scaling.log",
    conda:
        CONDA_ENV
    shell:
        "python -m ead.plots.fig09_majority_scaling --table {input.table}"
        " --png {output.png} --pdf {output.pdf} > {log} 2>&1"
