# Reproduction of "Let it Calm: Exploratory Annealed Decoding for Verifiable RL".
#   snakemake --cores all                                   # default CPU profile (configs/config.yaml)
#   snakemake --cores all --configfile configs/smoke.yaml   # tiny CI-sized run (deltas over the default)
#   snakemake --configfile configs/paper.yaml --workflow-profile workflow/profiles/slurm   # paper scale, GPUs
from snakemake.utils import min_version

min_version("9.0")


configfile: "configs/config.yaml"


# Jobs find the environment's `python` through PATH (see workflow/rules/common.smk).
envvars:
    "PATH",


include: "workflow/rules/common.smk"
include: "workflow/rules/schedule.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/models.smk"
include: "workflow/rules/premises.smk"
include: "workflow/rules/analyses.smk"


# Hub models (RL policies and analysis models of the paper profile); configs without paper_models never download.
if config.get("paper_models"):

    include: "workflow/rules/hub_models.smk"



# One backend makes the RL grid cells: tiny policies on CPU, or the paper profile's hub models with verl on GPUs.
if RL_BACKEND == "verl":

    include: "workflow/rules/rl_verl.smk"

else:

    include: "workflow/rules/rl_cpu.smk"


include: "workflow/rules/rl.smk"
include: "workflow/rules/summary.smk"


rule all:
    default_target: True
    input:
        get_final_figures(),
        get_final_tables(),
        rules.summary.output,
