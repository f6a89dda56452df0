"""What every section's settings share: the error type and the one sampler document.

A sampler is written the same way everywhere (``rl.samplers``, ``analyses.majority.samplers``,
``inference_only.samplers``): a schedule document of the registry in :mod:`ead.schedule` (``{name: ..., <its
parameters>}``), and, in ``rl.samplers`` only, the sampler's training options beside it (:data:`TRAINING_OPTIONS`).
EAD's shared defaults (the top-level ``ead`` block) apply in one resolver, :func:`ead.schedule.resolve_schedule`.
"""

from __future__ import annotations

from ead.schedule import resolve_schedule

#: Keys of an RL sampler document that are not schedule parameters: the importance-sampling correction (tis: none,
#: token or sequence; tis_cap), the fixed-tau baseline's training temperature (trains_at) and EAD's sizing from
#: measurement (measured).
TRAINING_OPTIONS = ("tis", "tis_cap", "trains_at", "measured")


class ConfigError(ValueError):
    """A config value is invalid; the message names the key and the value."""


def schedule_document(config: dict, sampler: dict, where: str) -> dict:
    """The schedule a sampler document samples with (its training options left out, EAD's defaults filled in from the
    config's ``ead`` block); ConfigError naming ``where`` (the sampler's config key) if it does not build."""
    try:
        return resolve_schedule({key: value for key, value in sampler.items() if key not in TRAINING_OPTIONS},
                                config["ead"])
    except (TypeError, ValueError) as error:
        raise ConfigError(f"{where}: {error}") from None
