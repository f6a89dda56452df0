# Paper profile (rl.backend: verl, configs/paper.yaml): hub data, and one verl run per RL grid cell (hub models come
# from rule paper_model, hub_models.smk), writing the same tables as the CPU backend's rl_cell (rl_cpu.smk), so
# rl_tables and rl_figure (rl.smk) serve both.
# Included by the Snakefile only when rl.backend is verl (instead of rl_cpu.smk), so the default and smoke profiles
# never touch a hub.
# GPU and time requests per rule live in workflow/profiles/slurm/config.yaml. These rules have no `conda:` env: run
# Snakemake inside the GPU environment (workflow/scripts/setup_gpu.sh or environment-gpu.yml + `pip install --no-deps
# -e .`), because the package pins the CPU torch build that verl[vllm] replaces (see docs/paper-scale.md, "What runs").


include: "rl_inputs.smk"


# The verl_cpu profile (configs/verl_cpu.yaml) makes both offline instead: a tiny policy of `policies` exported as a
# chat model (paper_models.<name>.policy), and a synthetic task's split in verl's format (paper_data.<role>.task).
LOCAL_VERL_MODELS = local_verl_models(config)


rule verl_local_model:
    input:
        policy=lambda wildcards: f"results/models/{LOCAL_VERL_MODELS[wildcards.local_model]}",
    output:
        model=directory("results/paper/models/{local_model}"),
    log:
        "results/logs/paper/models/{local_model}.log",
    wildcard_constraints:
        local_model=name_pattern(LOCAL_VERL_MODELS),
    shell:
        "python -m ead.rl.verl.local model --policy {input.policy} --out {output.model} > {log} 2>&1"


if paper_data_is_local(config):

    rule verl_local_data:
        input:
            data=lambda wildcards: f"results/data/{paper_data_entry(config, wildcards.role)['task']}.parquet",
        output:
            table="results/paper/data/{role}.parquet",
        params:
            task=lambda wildcards: paper_data_entry(config, wildcards.role)["task"],
            limit=lambda wildcards: paper_data_entry(config, wildcards.role)["limit"],
        log:
            "results/logs/paper/data/{role}.log",
        wildcard_constraints:
            role="train|val",
        shell:
            "python -m ead.rl.verl.local data --data {input.data} --task {params.task} --role {wildcards.role}"
            " --limit {params.limit} --out {output.table} > {log} 2>&1"

else:

    rule paper_data:
        output:
            table="results/paper/data/{role}.parquet",
        params:
            spec=get_paper_data_spec,
            instruction=shlex.quote(paper_data_instruction(config)),
        log:
            "results/logs/paper/data/{role}.log",
        wildcard_constraints:
            role="train|val",
        shell:
            "python -m ead.operations.hub data --spec {params.spec} --instruction {params.instruction}"
            " --role {wildcards.role} --out {output.table} > {log} 2>&1"


rule rl_cell_verl:
    input:
        model="results/paper/models/{policy}",
        train="results/paper/data/train.parquet",
        val="results/paper/data/val.parquet",
    output:
        steps=f"{CELL_PATTERN}/steps.csv",
        eval=f"{CELL_PATTERN}/eval.csv",
        eval_problems=f"{CELL_PATTERN}/eval_problems.csv",
    params:
        settings=get_verl_cell_settings,
        out_dir=CELL_PATTERN,
        run_dir=f"results/rl_runs/{CELL_PATTERN.removeprefix('results/rl/')}",
    # On CPU (rl.verl.device: cpu) one run takes every core Snakemake has: cells run one after another.
    threads: verl_cell_threads(config, workflow.cores)
    log:
        f"results/logs/{CELL_SUBPATH}.log",
    benchmark:
        f"results/benchmarks/{CELL_SUBPATH}.tsv"
    shell:
        "python -m ead.rl.verl.run --settings {params.settings} --model {input.model} --train {input.train} --val {input.val} --run-dir {params.run_dir}"
        " --out-dir {params.out_dir} > {log} 2>&1"
