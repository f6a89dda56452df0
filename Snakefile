# Reproduction of "Let it Calm: Exploratory Annealed Decoding for Verifiable RL".
#   snakemake --cores all                                   # default CPU profile (configs/config.yaml)
#   snakemake --cores all --configfile configs/smoke.yaml   # tiny CI-sized run (deltas over the default), in runs/smoke/
#   snakemake --configfile configs/paper.yaml --workflow-profile workflow/profiles/slurm   # paper scale, GPUs
from snakemake.utils import min_version

min_version("9.0")


# `snakemake --report report.html` (after a run): every figure, results/summary.md, the claims and the premise verdicts.
report: "workflow/report/workflow.rst"


# The config: configs/config.yaml, then the --configfile files (each with its `include:` layers), then --config,
# layered and checked once by ead.settings (common.smk); each profile runs in its own root (workdir: below).
include: "workflow/rules/common.smk"


# Jobs find the environment's `python` through PATH, their profile's name in EAD_PROFILE and their declared CPU kernel
# level in EAD_CPU_LEVEL (all set by workflow/rules/common.smk).
envvars:
    "PATH",
    "EAD_PROFILE",
    "EAD_CPU_LEVEL",
    "EAD_CONFIG_FILES",


# The profile's own output root (common.smk): . for the default profile, runs/<profile> for the others. Anchored at
# the workflow: a cluster job (e.g. --executor slurm) re-reads this Snakefile already inside that root, where a
# relative path would nest it again (runs/smoke/runs/smoke) and the job's outputs would go missing.
workdir: os.path.join(workflow.basedir, OUTPUT_ROOT)


include: "workflow/rules/measured_schedule_inputs.smk"
include: "workflow/rules/schedule.smk"


# EAD's c and d0 sized from measurement (configs/ablations/measured_schedule.yaml).
if SWITCHES.measured_schedule_policies:

    include: "workflow/rules/measured_schedule.smk"


include: "workflow/rules/data.smk"
include: "workflow/rules/models.smk"
include: "workflow/rules/premises.smk"
include: "workflow/rules/analyses.smk"


# Hub models (RL policies and analysis models of the paper profile); configs without paper_models never download.
if SWITCHES.paper_models:

    include: "workflow/rules/hub_models.smk"



# One backend makes the RL grid cells: tiny policies on CPU, or the paper profile's hub models with verl on GPUs.
if RL_BACKEND == "verl":

    include: "workflow/rules/rl_verl.smk"

else:

    include: "workflow/rules/rl_cpu.smk"


include: "workflow/rules/rl.smk"


# Inference-only sampler comparison (configs/ablations/inference_only.yaml): tiny policies, no RL.
if SWITCHES.inference_only:

    include: "workflow/rules/inference_only.smk"


include: "workflow/rules/summary.smk"


rule all:
    default_target: True
    input:
        get_final_figures(),
        get_final_tables(),
        get_tables_read(),
        rules.summary.output,
        rules.fingerprint.output,


# `snakemake --report` of an unfinished profile: Snakemake names only the first missing file; this names the profile,
# what to run, and the other profiles' runs here that a report can show (ead.workflow.report_refusal).
if ead.workflow.report_requested(sys.argv):
    REPORT_REFUSAL = ead.workflow.report_refusal(workflow.basedir, OUTPUT_ROOT, list(map(str, rules.all.input)), PROFILE)
    if REPORT_REFUSAL:
        print(REPORT_REFUSAL, file=sys.stderr)
        sys.exit(1)
