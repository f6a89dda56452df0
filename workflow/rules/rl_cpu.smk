# RL grid cells on CPU (rl.backend: cpu): per-policy step-0 evaluation and one training job per grid cell.
# Included by the Snakefile only for that backend; the verl backend's cell rule (rl_verl.smk) writes the same tables but
# eval_failures.csv (its converter classifies no failures, so the breakdown there has no failure shares).


include: "rl_inputs.smk"


# Step 0 of every cell of a policy: the policy-evaluation rule (models.smk) with the rl.eval settings.
use rule tiny_policy_base_eval as rl_base_eval with:
    output:
        summary="results/rl/base/{policy}/eval.csv",
        per_problem="results/rl/base/{policy}/eval_problems.csv",
        failures="results/rl/base/{policy}/eval_failures.csv",
    params:
        args=get_eval_args("rl_base"),
        task=rl_task(config),
    log:
        "results/logs/rl/base_{policy}.log",
    benchmark:
        "results/benchmarks/rl_base_eval_{policy}.tsv"
    priority: CRITICAL_PATH_PRIORITY["rl_step_0"]


rule rl_cell:
    input:
        model="results/models/{policy}",
        data=rl_data(config),
        base_eval=rules.rl_base_eval.output.per_problem,
        base_failures=rules.rl_base_eval.output.failures,
        measured=get_measured_schedule_input,
    output:
        steps=f"{CELL_PATTERN}/steps.csv",
        eval_problems=f"{CELL_PATTERN}/eval_problems.csv",
        eval_failures=f"{CELL_PATTERN}/eval_failures.csv",
    params:
        settings=get_cell_settings,
        measured=get_measured_schedule_arg,
        out_dir=CELL_PATTERN,
        checkpoint_dir=f"results/checkpoints/{CELL_SUBPATH}",
    threads: JOB_THREADS  # numerics.threads: declared, so the numbers do not depend on the cores given
    priority: CRITICAL_PATH_PRIORITY["rl_cells"]
    log:
        f"results/logs/{CELL_SUBPATH}.log",
    benchmark:
        f"results/benchmarks/{CELL_SUBPATH}.tsv"
    conda:
        CONDA_ENV
    shell:
        # rl.trainer: the same arguments and tables from ead.rl.train (torch) or ead.rl.trl.cell (trl)
        f"python -m {SWITCHES.rl_cell_module} --policy-dir {{input.model}} --data {{input.data}} --base-eval {{input.base_eval}}"
        " --base-failures {input.base_failures}"
        " --settings {params.settings} {params.measured} --out-dir {params.out_dir} --checkpoint-dir {params.checkpoint_dir}"
        " --threads {threads} > {log} 2>&1"


# A cell's eval.csv (Pass@k / Worst@k per evaluation step) from its per-problem counts: rl.eval.k lives only here and
# in the aggregation, so changing it re-summarises and never retrains.
rule rl_cell_eval:
    input:
        eval_problems=rules.rl_cell.output.eval_problems,
    output:
        eval=f"{CELL_PATTERN}/eval.csv",
    params:
        args=cell_eval_args(config),
    log:
        f"results/logs/{CELL_SUBPATH}_eval.log",
    conda:
        CONDA_ENV
    shell:
        "python -m ead.rl.cell_eval --eval-problems {input.eval_problems} {params.args} --out {output.eval} > {log} 2>&1"
