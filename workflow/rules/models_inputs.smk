# Input functions of the model rules (models.smk), kept beside them (Snakemake's linter wants rules and functions
# in separate files; shared helpers are in common.smk).


def get_sft_args(wildcards):
    """CLI flags of one policy's SFT: its shape and its SFT settings."""
    return cli_args(sft_settings(config, wildcards.policy))



def get_policy_data(wildcards):
    """The data table of a policy's task (policies.<name>.task: countdown unless stated)."""
    return f"results/data/{policy_task(config, wildcards.policy)}.parquet"


def get_sharpened_source(wildcards):
    """The trained policy a sharpened one copies."""
    return f"results/models/{sharpening(config, wildcards.policy)['policy']}"


def get_fork_sharpened_source(wildcards):
    """The trained policy a fork-sharpened one copies."""
    return f"results/models/{fork_sharpening(config, wildcards.policy)['policy']}"


def get_fork_sharpen_args(wildcards):
    """CLI flags of one fork-sharpened policy's distillation: its fork_sharpen block but the source."""
    return cli_args(fork_sharpen_settings(config, wildcards.policy))
