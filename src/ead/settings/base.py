"""What every section's settings share: the error type and the one merge of the top-level ``ead`` block."""

from __future__ import annotations


class ConfigError(ValueError):
    """A config value is invalid; the message names the key and the value."""


def ead_params(config: dict, overrides: dict | None = None) -> dict:
    """The EAD parameters a sampler uses: the top-level ``ead`` block with the sampler's own overrides over it.

    Every EAD sampler (RL samplers, analysis samplers, the premise probe's) is resolved here, so the block's
    defaults mean the same thing everywhere."""
    return {**config["ead"], **(overrides or {})}
