# Input functions of the premise probe (premises.smk, which includes this file).


def get_premise_outputs():
    """The probe's tables for every probed policy (CPU profiles; the paper profile probes none)."""
    if RL_BACKEND == "verl":
        return []
    return [f"results/premises/{policy}{suffix}.csv" for policy in config["premises"]["policies"]
            for suffix in ("", "_verdicts")]


def get_premise_data(wildcards):
    """The probed policy's task table (countdown or strategy)."""
    return premise_data(config, wildcards.policy)


def get_premise_settings():
    """The probe's settings as one JSON document (ead.settings.premises.premise_settings)."""
    return shlex.quote(json.dumps(premise_settings(config), sort_keys=True))


def get_premise_measured_input(wildcards):
    """The policy's measured schedule table when a probed sampler is `measured: true` (ead.analyses.measured_schedule)."""
    if premise_settings(config).get("measured"):
        return [f"results/schedule/measured_{wildcards.policy}.csv"]
    return []


def get_premise_measured_arg(wildcards):
    """' --measured-schedule <table>' for get_premise_measured_input's table; '' (the command unchanged) without."""
    return "".join(f" --measured-schedule {path}" for path in get_premise_measured_input(wildcards))
