# Input functions of the inference-only sampler comparison (config `inference_only`, configs/ablations/inference_only.yaml).


def get_inference_only_problems():
    """Every (model, split, sampler) evaluation's per-problem table."""
    spec = config["inference_only"]
    return [f"results/inference_only/{model}/{split}/{sampler}_problems.csv" for model in spec["models"]
            for split in (spec["select_split"], spec["report_split"]) for sampler in spec["samplers"]]


def get_inference_only_eval_args(wildcards):
    return inference_only_eval_args(config, wildcards.sampler, wildcards.split)


def get_inference_only_data(wildcards):
    return f"results/data/{policy_task(config, wildcards.model)}.parquet"


def get_inference_only_task(wildcards):
    return policy_task(config, wildcards.model)
