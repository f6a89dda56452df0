# Input functions of the inference-only sampler comparison (config `inference_only`, configs/ablations/inference_only.yaml).


def get_inference_only_problems():
    """Every (model, split, sampler) evaluation's per-problem table."""
    names = inference_only_names(config)
    return [f"results/inference_only/{model}/{split}/{sampler}_problems.csv" for model in names["model"]
            for split in names["split"] for sampler in names["sampler"]]


def get_inference_only_eval_args(wildcards):
    return inference_only_eval_args(config, wildcards.sampler, wildcards.split)


def get_inference_only_data(wildcards):
    return f"results/data/{policy_task(config, wildcards.model)}.parquet"


def get_inference_only_task(wildcards):
    return policy_task(config, wildcards.model)
