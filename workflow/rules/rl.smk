# RL results of either backend: every cell's tables aggregated into curves, and the RL figures drawn from them.
# The cells come from rl_cpu.smk (rl.backend: cpu) or rl_verl.smk (rl.backend: verl); both write
# results/rl/{policy}/{algorithm}/{sampler}/n{n}/seed{seed}/{steps,eval_problems,eval}.csv.


include: "rl_inputs.smk"


rule rl_tables:
    input:
        steps=get_cell_outputs("steps"),
        eval_problems=get_cell_outputs("eval_problems"),
    output:
        train_curves="results/rl/train_curves.csv",
        eval_curves="results/rl/eval_curves.csv",
    params:
        args=rl_tables_args(config),
        completeness=completeness_args(config),
    log:
        "results/logs/rl/tables.log",
    conda:
        CONDA_ENV
    shell:
        "python -m ead.rl.aggregate --steps {input.steps} --eval-problems {input.eval_problems}"
        " {params.args} {params.completeness} --train-curves {output.train_curves} --eval-curves {output.eval_curves} > {log} 2>&1"


# Each sampler minus each of `paired_baselines` at every evaluated step, paired by seed and problem (the claims'
# estimator over training): the RL figures' paired panels read it.
rule rl_paired_curves:
    input:
        eval_problems=get_cell_outputs("eval_problems"),
    output:
        "results/rl/paired_curves.csv",
    params:
        args=paired_curves_args(config),
    log:
        "results/logs/rl/paired_curves.log",
    conda:
        CONDA_ENV
    shell:
        "python -m ead.rl.paired --eval-problems {input.eval_problems} {params.args} --out {output} > {log} 2>&1"


rule rl_figure:
    input:
        eval_curves=rules.rl_tables.output.eval_curves,
        train_curves=rules.rl_tables.output.train_curves,
        paired_curves=rules.rl_paired_curves.output[0],
        code=get_plot_code,
    output:
        png=report("figures/{figure}.png", caption="../report/rl_figure.rst", category="Figures"),
        pdf="figures/{figure}.pdf",
    params:
        experiment=get_figure_experiment,
        k=figure_k(config),
    log:
        "results/logs/figures/{figure}.log",
    wildcard_constraints:
        figure="|".join(rl_figures()),
    conda:
        CONDA_ENV
    shell:
        "python -m ead.plots.rl_figure --figure {wildcards.figure} --eval-curves {input.eval_curves}"
        " --train-curves {input.train_curves} --paired-curves {input.paired_curves}"
        " --experiment {params.experiment} --k {params.k}"
        " --png {output.png} --pdf {output.pdf} > {log} 2>&1"


# Premise G4, "RL learns here" (config `rl_learns`): the G4 sampler's (tau 1.0's) Pass@1 at the last step minus step
# 0 in every (policy, algorithm, n) that runs it, paired by seed and problem, with its verdict (ead.claims.rl_learns);
# the claims rule copies each verdict into the claims made in that setting.
rule rl_learns:
    input:
        eval_problems=get_cell_outputs("eval_problems"),
    output:
        table=report("results/premises/rl_learns.csv", caption="../report/rl_learns.rst", category="Summary"),
        **get_rl_learns_pool_output(),
    params:
        # with a training pool, the flag of its table too (one param: without a pool its value is as before)
        args=rl_learns_args(config)
        + "".join(f" --train-pool-out {path}" for path in get_rl_learns_pool_output().values()),
    log:
        "results/logs/rl/rl_learns.log",
    conda:
        CONDA_ENV
    shell:
        "python -m ead.claims.rl_learns --eval-problems {input.eval_problems} {params.args} --out {output.table} > {log} 2>&1"


# Where the grid's signal and learning land (config `rl.breakdown`): per-step training metrics by training phase, and
# the evaluation by a column of the task's data table (the strategy task's key); a target when the config asks.
rule rl_breakdown:
    input:
        steps=get_cell_outputs("steps"),
        eval_problems=get_cell_outputs("eval_problems"),
        eval_failures=get_failure_tables(),
        data=rl_data(config),
    output:
        signal="results/rl/signal_by_phase.csv",
        groups="results/rl/eval_by_group.csv",
    params:
        args=get_breakdown_args,
    log:
        "results/logs/rl/breakdown.log",
    conda:
        CONDA_ENV
    shell:
        "python -m ead.rl.breakdown --steps {input.steps} --eval-problems {input.eval_problems}"
        " --eval-failures {input.eval_failures} --data {input.data}"
        " {params.args} --signal-out {output.signal} --groups-out {output.groups} > {log} 2>&1"


# The chain behind the cells, from the breakdown's tables only (in rule all where the config has `rl.breakdown`):
# informative rollout groups by phase, and the evaluation's samples by first mistake over training.
rule rl_chain_figure:
    input:
        signal=rules.rl_breakdown.output.signal,
        groups=rules.rl_breakdown.output.groups,
        code=plot_code("rl_chain", shared=("style.py", "rl_curves.py")),
    output:
        **figure_outputs("rl_chain"),
    log:
        "results/logs/figures/rl_chain.log",
    conda:
        CONDA_ENV
    shell:
        "python -m ead.plots.rl_chain --table {input.signal} --groups {input.groups}"
        " --png {output.png} --pdf {output.pdf} > {log} 2>&1"


# The paper's RL claims as paired comparisons of cells, with CIs, power and computed verdicts (config `claims`), and
# the rows of the claims of Figs. 1 and 2 (analyses.claims, rule analysis_claims) after them.
rule claims:
    input:
        steps=get_cell_outputs("steps"),
        eval_problems=get_cell_outputs("eval_problems"),
        analyses=get_analysis_claims_table(),
        rl_learns=get_rl_learns_table(),
        rl_learns_pool=list(get_rl_learns_pool_output().values()),
    output:
        report("results/claims.csv", caption="../report/claims.rst", category="Summary"),
    params:
        **claims_params(config),
        rl_learns="".join(f" --rl-learns {path}" for path in get_rl_learns_table())
        + "".join(f" --rl-learns-train-pool {path}" for path in get_rl_learns_pool_output().values()),
    log:
        "results/logs/rl/claims.log",
    conda:
        CONDA_ENV
    shell:
        "python -m ead.claims.rl --claims {params.claims} --eval-problems {input.eval_problems} --steps {input.steps}"
        " --window {params.window} --resamples {params.resamples} --seed {params.seed} {params.completeness}"
        " --analysis-claims {input.analyses}{params.rl_learns} --out {output} > {log} 2>&1"


# Beyond the paper: the claims of one figure id (configs/ablations/beyond_the_paper.yaml: `beyond`) as a forest plot
# of paired effects, drawn from the claims table only; in rule all when some claim names it (ead.workflow.FIGURES).
rule claims_figure:
    input:
        claims=rules.claims.output[0],
        code=plot_code("claims_forest", shared=("style.py", "rl_curves.py")),
    output:
        **figure_outputs("claims_{claims_figure}", caption="claims_figure"),
    log:
        "results/logs/figures/claims_{claims_figure}.log",
    wildcard_constraints:
        claims_figure="|".join(claim_figures()),
    conda:
        CONDA_ENV
    shell:
        "python -m ead.plots.claims_forest --claims {input.claims} --figure {wildcards.claims_figure}"
        " --png {output.png} --pdf {output.pdf} > {log} 2>&1"


# The schedule-shapes figure (config `schedule_shapes`, added by configs/ablations/beyond_the_paper.yaml): the tau each
# shape's cells sample with, by position and step, then the figure from that table and the paired curves.
rule schedule_shapes_table:
    output:
        "results/rl/schedule_shapes.csv",
    params:
        schedules=get_shape_schedules,
        args=get_shape_table_args,
    log:
        "results/logs/rl/schedule_shapes.log",
    conda:
        CONDA_ENV
    shell:
        "python -m ead.analyses.sampler_schedules --schedules {params.schedules} {params.args} --out {output}"
        " > {log} 2>&1"


rule schedule_shapes_figure:
    input:
        schedules=rules.schedule_shapes_table.output[0],
        paired_curves=rules.rl_paired_curves.output[0],
        code=plot_code("schedule_shapes", shared=("style.py", "rl_curves.py")),
    output:
        **figure_outputs("schedule_shapes", caption="rl_figure"),
    params:
        spec=get_shape_spec,
    log:
        "results/logs/figures/schedule_shapes.log",
    conda:
        CONDA_ENV
    shell:
        "python -m ead.plots.schedule_shapes --schedules {input.schedules} --paired-curves {input.paired_curves}"
        " --spec {params.spec} --png {output.png} --pdf {output.pdf} > {log} 2>&1"
