"""Cross-key checks of the config sections added for the authors' revised experiments (issue #29): paired-difference
baselines, the d_max sweep's figure, the schedule sized from measurement. Called by ``ead.config.validate_config``
after the schema; each check returns messages naming the key and value, and the first one is raised."""

from __future__ import annotations

from ead.rl.paired import check_paired_baselines

__all__ = ["revised_config_problems"]


def revised_config_problems(config: dict) -> list[str]:
    """Every problem of the revised experiments' keys, in the order a reader would fix them."""
    return [*check_paired_baselines(config)]
