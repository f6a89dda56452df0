# RL grid cells on CPU (rl.backend: cpu): per-policy step-0 evaluation and one training job per grid cell.
# Included by the Snakefile only for that backend; the verl backend's cell rule (rl_verl.smk) writes the same tables.


rule rl_base_eval:
    input:
        model=rules.tiny_policy_sft.output.model,
        data=rules.countdown_dataset.output.table,
    output:
        summary="results/rl/base/{policy}/eval.csv",
        per_problem="results/rl/base/{policy}/eval_problems.csv",
    params:
        args=get_rl_eval_args(),
    log:
        "results/logs/rl/base_{policy}.log",
    benchmark:
        "results/benchmarks/rl_base_eval_{policy}.tsv"
    conda:
        CONDA_ENV
    shell:
        "python -m ead.evaluation --model {input.model} --data {input.data} --task countdown {params.args}"
        " --per-problem {output.per_problem} --out {output.summary} > {log} 2>&1"


rule rl_cell:
    input:
        model=rules.tiny_policy_sft.output.model,
        data=rules.countdown_dataset.output.table,
        base_eval=rules.rl_base_eval.output.per_problem,
    output:
        steps=f"{CELL_PATTERN}/steps.csv",
        eval=f"{CELL_PATTERN}/eval.csv",
        eval_problems=f"{CELL_PATTERN}/eval_problems.csv",
    params:
        settings=get_cell_settings,
        grader=get_grader_arg(),
        out_dir=CELL_PATTERN,
        checkpoint_dir=f"results/checkpoints/{CELL_PATTERN}",
    threads: 1
    log:
        f"results/logs/{CELL_SUBPATH}.log",
    benchmark:
        f"results/benchmarks/{CELL_SUBPATH}.tsv"
    conda:
        CONDA_ENV
    shell:
        "python -m ead.rl.train --policy-dir {input.model} --data {input.data} --base-eval {input.base_eval}"
        " --settings {params.settings} {params.grader} --out-dir {params.out_dir} --checkpoint-dir {params.checkpoint_dir}"
        " --threads {threads} > {log} 2>&1"
