# Input functions of the model rules (models.smk), kept beside them (Snakemake's linter wants rules and functions
# in separate files; shared helpers are in common.smk).


def get_sft_args(wildcards):
    """CLI flags of one policy's SFT: its shape and its SFT settings."""
    policy = config["policies"][wildcards.policy]
    return cli_args({**policy["shape"], **policy["sft"]})


def sharpened_policies(config):
    """The policies that are sharpened copies of a trained one (`policies.<name>.sharpen`)."""
    return [name for name, spec in config["policies"].items() if "sharpen" in spec]


def name_pattern(names):
    """A wildcard constraint matching exactly one of ``names`` (a never-matching pattern for none)."""
    return "|".join(map(re.escape, names)) or "(?!)"


def get_sharpened_source(wildcards):
    """The trained policy a sharpened one copies."""
    return f"results/models/{config['policies'][wildcards.policy]['sharpen']['policy']}"
