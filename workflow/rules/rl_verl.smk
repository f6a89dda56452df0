# Paper profile (rl.backend: verl, configs/paper.yaml): hub models and data, and one verl run per RL grid cell.
# Included by the Snakefile only when rl.backend is verl, so the default and smoke profiles never touch a hub.
# GPU and time requests per rule live in workflow/profiles/slurm/config.yaml. These rules have no `conda:` env: run
# Snakemake inside the GPU environment (workflow/scripts/setup_gpu.sh or environment-gpu.yml + `pip install --no-deps
# -e .`), because the package pins the CPU torch build that verl[vllm] replaces (see docs/paper_scale.md).


rule paper_model:
    output:
        model=directory("results/paper/models/{policy}"),
    params:
        source=get_paper_model_params,
    log:
        "results/logs/paper/models/{policy}.log",
    shell:
        "python -m ead.verl_backend.hub model --hub-id {params.source[hub_id]} --revision {params.source[revision]}"
        " --out {output.model} > {log} 2>&1"


rule paper_data:
    output:
        table="results/paper/data/{role}.parquet",
    params:
        spec=get_paper_data_spec,
        instruction=shlex.quote(config["paper_data"]["instruction"]),
    log:
        "results/logs/paper/data/{role}.log",
    wildcard_constraints:
        role="train|val",
    shell:
        "python -m ead.verl_backend.hub data --spec {params.spec} --instruction {params.instruction}"
        " --role {wildcards.role} --out {output.table} > {log} 2>&1"


rule rl_cell_verl:
    input:
        model="results/paper/models/{policy}",
        train="results/paper/data/train.parquet",
        val="results/paper/data/val.parquet",
    output:
        steps="results/rl/{policy}/{algorithm}/{sampler}/n{n}/seed{seed}/steps.csv",
        eval="results/rl/{policy}/{algorithm}/{sampler}/n{n}/seed{seed}/eval.csv",
    params:
        config=get_verl_cell_config,
        run_dir="results/rl_runs/{policy}/{algorithm}/{sampler}/n{n}/seed{seed}",
    log:
        "results/logs/rl/{policy}/{algorithm}/{sampler}/n{n}/seed{seed}.log",
    benchmark:
        "results/benchmarks/rl/{policy}/{algorithm}/{sampler}/n{n}/seed{seed}.tsv"
    wildcard_constraints:
        policy="[A-Za-z0-9._-]+",
        algorithm="[A-Za-z0-9._-]+",
        sampler="[A-Za-z0-9._-]+",
        n=r"\d+",
        seed=r"\d+",
    shell:
        "python -m ead.verl_backend.run --config {params.config} --policy {wildcards.policy}"
        " --algorithm {wildcards.algorithm} --sampler {wildcards.sampler} --n {wildcards.n} --seed {wildcards.seed}"
        " --model {input.model} --train {input.train} --val {input.val} --run-dir {params.run_dir}"
        " --steps-out {output.steps} --eval-out {output.eval} > {log} 2>&1"
