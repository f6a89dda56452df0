# Inference-only sampler comparison (no RL; config `inference_only`, configs/ablations/inference_only.yaml): each model
# evaluated with every sampler on the selection and report splits, then the table, the headline and the figure.


include: "inference_only_inputs.smk"


rule inference_only_eval:
    input:
        model="results/models/{model}",
        data=get_inference_only_data,
    output:
        summary="results/inference_only/{model}/{split}/{sampler}.csv",
        per_problem="results/inference_only/{model}/{split}/{sampler}_problems.csv",
    params:
        args=get_inference_only_eval_args,
        task=get_inference_only_task,
    threads: JOB_THREADS  # numerics.threads: declared, so the numbers do not depend on the cores given
    log:
        "results/logs/inference_only/{model}/{split}/{sampler}.log",
    wildcard_constraints:
        **{wildcard: name_pattern(names) for wildcard, names in inference_only_names(config).items()},
    conda:
        CONDA_ENV
    shell:
        "python -m ead.evaluation --model {input.model} --data {input.data} --task {params.task} {params.args}"
        " --per-problem {output.per_problem} --out {output.summary} --threads {threads} > {log} 2>&1"


rule inference_only_table:
    input:
        problems=get_inference_only_problems(),
    output:
        table="results/inference_only/samplers.csv",
        headline="results/inference_only/headline.csv",
    params:
        args=inference_only_table_args(config),
    log:
        "results/logs/inference_only/table.log",
    conda:
        CONDA_ENV
    shell:
        "python -m ead.analyses.inference_only --problems {input.problems} {params.args}"
        " --table {output.table} --headline {output.headline} > {log} 2>&1"


rule inference_only_figure:
    input:
        table=rules.inference_only_table.output.table,
        headline=rules.inference_only_table.output.headline,
        code=plot_code("inference_only"),
    output:
        **figure_outputs("inference_only", caption="rl_figure"),
    log:
        "results/logs/figures/inference_only.log",
    conda:
        CONDA_ENV
    shell:
        "python -m ead.plots.inference_only --table {input.table} --headline {input.headline}"
        " --png {output.png} --pdf {output.pdf} > {log} 2>&1"
