# Input functions of the premise probe (premises.smk, which includes this file).


def get_premise_outputs():
    """The probe's tables for every probed policy (CPU profiles; the paper profile probes none)."""
    if RL_BACKEND == "verl":
        return []
    return [f"results/premises/{policy}{suffix}.csv" for policy in config["premises"]["policies"]
            for suffix in ("", "_verdicts")]


def get_premise_settings():
    """The probe's settings as one JSON document (ead.settings.premises.premise_settings)."""
    return shlex.quote(json.dumps(premise_settings(config), sort_keys=True))
