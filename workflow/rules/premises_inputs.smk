# Input functions of the premise probe (premises.smk, which includes this file).


def get_premise_outputs():
    """The probe's tables for every probed policy (CPU profiles; the paper profile probes none)."""
    if RL_BACKEND == "verl":
        return []
    return [f"results/premises/{policy}{suffix}.csv" for policy in config["premises"]["policies"]
            for suffix in ("", "_verdicts")]


def get_premise_settings():
    """The probe's settings as one JSON document, samplers resolved to their schedules (ead.rl.grid)."""
    premises = config["premises"]
    settings = {key: premises[key] for key in ("split", "limit", "n", "max_new_tokens", "seed", "batch_size",
                                               "bootstrap", "steps", "baseline", "group_sizes", "tis_cap")}
    settings["samplers"] = {name: sampler_schedule(config, name) for name in premises["samplers"]}
    settings["premises"] = {key: premises[key] for key in ("hot", "cold", "strategy_share_min", "ead",
                                                           "informative_k")}
    return shlex.quote(json.dumps(settings, sort_keys=True))
