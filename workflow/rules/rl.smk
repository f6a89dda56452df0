# RL training grids (CPU backend): per-policy step-0 evaluation, one job per grid cell, aggregation, figures.


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
        out_dir=CELL_PATTERN,
        checkpoint_dir=f"results/checkpoints/{CELL_PATTERN}",
    threads: 1
    log:
        f"results/logs/{CELL_PATTERN}.log",
    benchmark:
        f"results/benchmarks/{CELL_PATTERN}.tsv"
    conda:
        CONDA_ENV
    shell:
        "python -m ead.rl.train --policy-dir {input.model} --data {input.data} --base-eval {input.base_eval}"
        " --settings {params.settings} --out-dir {params.out_dir} --checkpoint-dir {params.checkpoint_dir}"
        " --threads {threads} > {log} 2>&1"


rule rl_tables:
    input:
        steps=get_cell_outputs("steps"),
        eval_problems=get_cell_outputs("eval_problems"),
    output:
        train_curves="results/rl/train_curves.csv",
        eval_curves="results/rl/eval_curves.csv",
    params:
        args=cli_args({"k": config["rl"]["eval"]["k"], "seed": config["rl"]["eval"]["seed"]}),
    log:
        "results/logs/rl/tables.log",
    conda:
        CONDA_ENV
    shell:
        "python -m ead.rl.aggregate --steps {input.steps} --eval-problems {input.eval_problems}"
        " {params.args} --train-curves {output.train_curves} --eval-curves {output.eval_curves} > {log} 2>&1"


rule rl_figure:
    input:
        eval_curves=rules.rl_tables.output.eval_curves,
        train_curves=rules.rl_tables.output.train_curves,
    output:
        png="figures/{figure}.png",
        pdf="figures/{figure}.pdf",
    params:
        experiment=get_figure_experiment,
        k=max(config["rl"]["eval"]["k"]),
    log:
        "results/logs/figures/{figure}.log",
    conda:
        CONDA_ENV
    shell:
        "python -m ead.plots.{wildcards.figure} --eval-curves {input.eval_curves}"
        " --train-curves {input.train_curves} --experiment {params.experiment} --k {params.k}"
        " --png {output.png} --pdf {output.pdf} > {log} 2>&1"
