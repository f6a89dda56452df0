# Input functions of the premise probe (premises.smk, which includes this file).


def premise_table_suffixes():
    """The probe's tables of one policy by kind: ``metrics``, ``verdicts``, and ``groups`` (by the data column
    premises.group_by) only where the config names one; none in the paper profile (it probes no policy)."""
    if RL_BACKEND == "verl":
        return {}
    group_by = premise_group_by(config)
    return {"metrics": "", "verdicts": "_verdicts", **({"groups": f"_by_{group_by}"} if group_by else {})}


def get_premise_tables(kind):
    """One kind of the probe's tables (premise_table_suffixes) for every probed policy."""
    suffixes = premise_table_suffixes()
    return [f"results/premises/{policy}{suffixes[kind]}.csv" for policy in SWITCHES.probed_policies
            if kind in suffixes]


def get_premise_outputs():
    """Every table of the probe, policy by policy."""
    return [f"results/premises/{policy}{suffix}.csv" for policy in SWITCHES.probed_policies
            for suffix in premise_table_suffixes().values()]


def get_premise_group_output():
    """The probe's table by the data column premises.group_by (as the rule's named output), none without it."""
    group_by = premise_group_by(config)
    return {"groups": f"results/premises/{{policy}}_by_{group_by}.csv"} if group_by else {}


def get_premise_data(wildcards):
    """The probed policy's task table (countdown or strategy)."""
    return premise_data(config, wildcards.policy)


def get_premise_settings():
    """The probe's settings as one JSON document (ead.settings.premises.ProbeSettings)."""
    return shlex.quote(premise_settings(config).to_json())


def get_premise_measured_input(wildcards):
    """The policy's measured schedule table when a probed sampler is `measured: true` (ead.analyses.measured_schedule)."""
    if premise_settings(config).measured:
        return [f"results/schedule/measured_{wildcards.policy}.csv"]
    return []


def get_premise_optional_args(wildcards, output):
    """' --measured-schedule <table>' for get_premise_measured_input's table and ' --groups-out <table>' for
    get_premise_group_output's; '' (the command and the params unchanged) without either."""
    return "".join([*(f" --measured-schedule {path}" for path in get_premise_measured_input(wildcards)),
                    *(f" --groups-out {output.groups}" for _ in get_premise_group_output())])
