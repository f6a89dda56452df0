# The run's headline numbers (results/summary.md), rendered from the result tables by ead.summary: no doc quotes a
# result itself, because results depend on the machine (docs/operations.md, "Reproducibility").


include: "summary_inputs.smk"


rule summary:
    input:
        base_eval=get_base_eval_tables(),
        eval_curves=rules.rl_tables.output.eval_curves,
        entropy=get_analysis_tables("entropy_by_position"),
        entropy_roles=get_role_tables,
        forking=get_analysis_tables("forking"),
        majority=get_analysis_tables("majority_scaling"),
        premises=get_premise_tables("verdicts"),
        premise_metrics=get_premise_tables("metrics"),
        premise_groups=get_premise_tables("groups"),
        claims=rules.claims.output,
        rl_learns=get_rl_learns_table() + list(get_rl_learns_pool_output().values()),
        signal_by_phase=get_breakdown_table("signal"),
        eval_by_group=get_breakdown_table("groups"),
    output:
        report("results/summary.md", caption="../report/summary.rst", category="Summary"),
    params:
        profile=PROFILE,
        meaning=SWITCHES.results_meaning,
        # the command that refreshes this run: its --configfile files (and --config), so a smoke summary says smoke's
        rerun=shlex.quote(get_rerun_command()),
        # the grid's breakdowns, only where the config has rl.breakdown, and the probe's table by group, only where it
        # has premises.group_by (the flags are absent otherwise, and this param '' as before)
        breakdown="".join([*(f" --signal-by-phase {path}" for path in get_breakdown_table("signal")),
                           *(f" --eval-by-group {path}" for path in get_breakdown_table("groups")),
                           *(f" --premises-by-group {path}" for path in get_premise_tables("groups"))]),
    log:
        "results/logs/summary.log",
    conda:
        CONDA_ENV
    shell:
        "python -m ead.summary --profile {params.profile} --results-meaning {params.meaning} --rerun {params.rerun} --base-eval {input.base_eval}"
        " --eval-curves {input.eval_curves} --entropy {input.entropy} --entropy-roles {input.entropy_roles}"
        " --forking {input.forking}"
        " --majority {input.majority} --premises {input.premises} --premise-metrics {input.premise_metrics}"
        " --rl-learns {input.rl_learns} --claims {input.claims}{params.breakdown} --out {output} > {log} 2>&1"


# The run's fingerprint (ead.fingerprint): a digest of each stage's results, data to claims, to compare two runs bit
# for bit (the README's result blocks quote it; tests compare the smoke run's with tests/fixtures/).
rule fingerprint:
    input:
        get_fingerprint_inputs(),
    output:
        "results/fingerprint.csv",
    log:
        "results/logs/fingerprint.log",
    conda:
        CONDA_ENV
    shell:
        "python -m ead.fingerprint --inputs {input} --out {output} > {log} 2>&1"
