# Premise probe (no RL): the paper's premises measured on each tiny policy before RL runs on it
# (ead.analyses.premises): per-sampler metrics paired against the baseline, the verdicts G1-G3, and where the config
# names a data column (premises.group_by) Pass@1 and informative groups by its values.


include: "premises_inputs.smk"


rule premises:
    input:
        model="results/models/{policy}",
        data=get_premise_data,
        measured=get_premise_measured_input,
    output:
        table="results/premises/{policy}.csv",
        verdicts=report("results/premises/{policy}_verdicts.csv", caption="../report/premise_verdicts.rst",
                        category="Summary"),
        **get_premise_group_output(),
    params:
        settings=get_premise_settings(),
        threads=SWITCHES.probe_threads,
        # optional flags in one param: without them it is '' as before, so the default's probe does not rerun
        optional=get_premise_optional_args,
    priority: CRITICAL_PATH_PRIORITY["premises"]
    log:
        "results/logs/premises/{policy}.log",
    benchmark:
        "results/benchmarks/premises/{policy}.tsv"
    conda:
        CONDA_ENV
    shell:
        "python -m ead.analyses.premises --model {input.model} --data {input.data} --settings {params.settings}"
        " --threads {params.threads}{params.optional} --out {output.table} --verdicts {output.verdicts} > {log} 2>&1"
