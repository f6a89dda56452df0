# Hub models of the paper profile (`paper_models`: RL policies and analysis models), the only rule that downloads a
# model. Included by the Snakefile only when the config has paper_models, so the default and smoke profiles never
# see it. No `conda:` env: the paper profile runs Snakemake inside the GPU environment (see rl_verl.smk).


include: "hub_models_inputs.smk"


rule paper_model:
    output:
        model=directory("results/paper/models/{hub_model}"),
    params:
        source=get_paper_model_params,
    log:
        "results/logs/paper/models/{hub_model}.log",
    shell:
        "python -m ead.operations.hub model --hub-id {params.source[hub_id]} --revision {params.source[revision]}"
        " --out {output.model} > {log} 2>&1"
