"""What every section's settings share: the error type and the one sampler document.

A sampler is written the same way everywhere (``rl.samplers``, ``analyses.majority_scaling.samplers``,
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


def sampler_training(rl: dict, sampler: dict) -> dict:
    """A sampler document's training options, each with its default where the document leaves it out (the one place
    they are written): no TIS, the cap ``rl.tis_cap``, the trainer at ``rl.fixed_tau_trains_at``, not measured."""
    return {"tis": sampler.get("tis", "none"), "tis_cap": sampler.get("tis_cap", rl["tis_cap"]),
            "trains_at": sampler.get("trains_at", rl["fixed_tau_trains_at"]),
            "measured": sampler.get("measured", False)}


class ConfigError(ValueError):
    """A config value is invalid; the message names the key and the value.

    ``suggested_overrides``, where the message proposes a fix as ``--config`` pairs (Snakemake's spelling, e.g.
    ``{"rl__eval__n": "16"}``), lets the loader try that fix and say whether it is enough
    (:func:`ead.settings.load_workflow_config`), so a hint never leads a user into a second refusal unannounced."""

    def __init__(self, message: str, suggested_overrides: dict[str, str] | None = None):
        super().__init__(message)
        self.suggested_overrides = suggested_overrides


def schedule_document(config: dict, sampler: dict, where: str) -> dict:
    """The schedule a sampler document samples with (its training options left out, EAD's defaults filled in from the
    config's ``ead`` block); ConfigError naming ``where`` (the sampler's config key) if it does not build."""
    try:
        return resolve_schedule({key: value for key, value in sampler.items() if key not in TRAINING_OPTIONS},
                                config["ead"])
    except (TypeError, ValueError) as error:
        raise ConfigError(f"{where}: {error}") from None


def check_unique(key: str, values: list) -> None:
    """A list that is a set (seeds, samplers, policies, models, ...) names each value once: a repeat would be silently
    collapsed (e.g. seeds [0, 0] typed for [0, 1] runs one seed), so it is an error naming the key and the value."""
    seen = set()
    for value in values:
        if value in seen:
            raise ConfigError(f"{key} = {values}: {value!r} is listed twice (each value runs once; a repeat would be "
                              "silently collapsed)")
        seen.add(value)


def check_set_lists(config: dict) -> None:
    """Every list of the config that is a set, by :func:`check_unique`."""
    rl = config["rl"]
    for name, experiment in rl["experiments"].items():
        for field in ("policies", "algorithms", "samplers", "n", "seeds"):
            check_unique(f"rl.experiments.{name}.{field}", experiment[field])
    lists = {"rl.run": rl.get("run", []), "rl.eval.k": rl["eval"]["k"], "paired_baselines": config["paired_baselines"],
             "premises.policies": config["premises"]["policies"], "premises.samplers": config["premises"]["samplers"],
             "premises.steps": config["premises"]["steps"], "data.real": config["data"]["real"]}
    for section in ("entropy_by_position", "forking", "majority_scaling") if "analyses" in config else ():
        lists[f"analyses.{section}.models"] = config["analyses"][section]["models"]
    for key in ("schedule_shapes", "inference_only", "measured_schedule"):
        for field in ("samplers", "models", "policies", "steps"):
            if isinstance((config.get(key) or {}).get(field), list):
                lists[f"{key}.{field}"] = config[key][field]
    for key, values in lists.items():
        check_unique(key, values)
