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
        args=cli_args({"k": config["rl"]["eval"]["k"], "seed": config["rl"]["eval"]["seed"]}),
        completeness=get_completeness_args(),
    log:
        "results/logs/rl/tables.log",
    conda:
        CONDA_ENV
    shell:
        "python -m ead.rl.aggregate --steps {input.steps} --eval-problems {input.eval_problems}"
        " {params.args} {params.completeness} --train-curves {output.train_curves} --eval-curves {output.eval_curves} > {log} 2>&1"


rule rl_figure:
    input:
        eval_curves=rules.rl_tables.output.eval_curves,
        train_curves=rules.rl_tables.output.train_curves,
        code=get_plot_code,
    output:
        png=report("figures/{figure}.png", caption="../report/rl_figure.rst", category="Figures"),
        pdf="figures/{figure}.pdf",
    params:
        experiment=get_figure_experiment,
        k=max(config["rl"]["eval"]["k"]),
    log:
        "results/logs/figures/{figure}.log",
    wildcard_constraints:
        figure="|".join([*RL_FIGURES, *OVERLAY_RL_FIGURES]),
    conda:
        CONDA_ENV
    shell:
        "python -m ead.plots.{wildcards.figure} --eval-curves {input.eval_curves}"
        " --train-curves {input.train_curves} --experiment {params.experiment} --k {params.k}"
        " --png {output.png} --pdf {output.pdf} > {log} 2>&1"


# The paper's RL claims as paired comparisons of cells, with CIs, power and computed verdicts (config `claims`), and
# the rows of the claims of Figs. 1 and 2 (analyses.claims, rule analysis_claims) after them.
rule claims:
    input:
        steps=get_cell_outputs("steps"),
        eval_problems=get_cell_outputs("eval_problems"),
        analyses=get_analysis_claims_table(),
    output:
        report("results/claims.csv", caption="../report/claims.rst", category="Summary"),
    params:
        claims=shlex.quote(json.dumps(config["claims"], sort_keys=True)),
        window=config["claims_window"],
        resamples=config["claims_bootstrap"],
        seed=config["rl"]["eval"]["seed"],
        completeness=get_completeness_args(),
    log:
        "results/logs/rl/claims.log",
    conda:
        CONDA_ENV
    shell:
        "python -m ead.rl.compare --claims {params.claims} --eval-problems {input.eval_problems} --steps {input.steps}"
        " --window {params.window} --resamples {params.resamples} --seed {params.seed} {params.completeness}"
        " --analysis-claims {input.analyses} --out {output} > {log} 2>&1"


# Beyond the paper: the claims of one figure id (configs/ablations/beyond_the_paper.yaml: `beyond`) as a forest plot
# of paired effects, drawn from the claims table only; in rule all when some claim names it (CLAIM_FIGURES).
rule claims_figure:
    input:
        claims=rules.claims.output[0],
        code=plot_code("claims_forest", shared=("style.py", "rl_curves.py")),
    output:
        **figure_outputs("claims_{claims_figure}", caption="claims_figure"),
    log:
        "results/logs/figures/claims_{claims_figure}.log",
    wildcard_constraints:
        claims_figure="|".join(CLAIM_FIGURES),
    conda:
        CONDA_ENV
    shell:
        "python -m ead.plots.claims_forest --claims {input.claims} --figure {wildcards.claims_figure}"
        " --png {output.png} --pdf {output.pdf} > {log} 2>&1"
