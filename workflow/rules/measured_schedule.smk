# EAD's c and d0 sized from a policy's measurements (ead.analyses.measured_schedule): its entropy by position and its
# responses' lengths from the entropy analysis (analyses.smk), by the rule of config `measured_schedule`.


rule measured_schedule:
    input:
        entropy="results/analyses/entropy_by_position/{policy}.csv",
        samples="results/analyses/entropy_by_position/{policy}_samples.parquet",
    output:
        "results/schedule/measured_{policy}.csv",
    params:
        args=measured_schedule_args(config),
    log:
        "results/logs/schedule/measured_{policy}.log",
    conda:
        CONDA_ENV
    shell:
        "python -m ead.analyses.measured_schedule --policy {wildcards.policy} --entropy {input.entropy}"
        " --samples {input.samples} {params.args} --out {output} > {log} 2>&1"
