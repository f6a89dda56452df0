# Input functions of the inference-only sampler comparison (config `inference_only`, configs/ablations/inference_only.yaml).


def get_inference_only_problems():
    """Every (model, split, sampler) evaluation's per-problem table."""
    spec = config["inference_only"]
    return [f"results/inference_only/{model}/{split}/{sampler}_problems.csv" for model in spec["models"]
            for split in (spec["select_split"], spec["report_split"]) for sampler in spec["samplers"]]


def get_inference_only_eval_args(wildcards):
    spec = config["inference_only"]
    options = {key: spec[key] for key in ("limit", "n", "k", "max_new_tokens", "seed", "batch_size")}
    schedule = shlex.quote(json.dumps(inference_only_schedule(config, wildcards.sampler), sort_keys=True))
    return f"{cli_args(options)} --split {shlex.quote(wildcards.split)} --schedule {schedule} {get_grader_arg()}"


def get_inference_only_data(wildcards):
    return f"results/data/{policy_task(config, wildcards.model)}.parquet"


def get_inference_only_task(wildcards):
    return policy_task(config, wildcards.model)


def get_inference_only_table_args():
    spec = config["inference_only"]
    families = {name: sampler["name"] for name, sampler in spec["samplers"].items()}
    return (f"--families {shlex.quote(json.dumps(families, sort_keys=True))} "
            + cli_args({"k": spec["k"], "baseline": spec["baseline"], "select_split": spec["select_split"],
                        "report_split": spec["report_split"], "select_metric": spec["select_metric"],
                        "resamples": config["claims_bootstrap"], "seed": spec["seed"]}))
