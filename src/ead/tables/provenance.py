"""Which run wrote a table: every table a workflow job writes records the profile that made it
(:data:`PROFILE_COLUMN`), the config files layered for it (:data:`CONFIG_FILES_COLUMN`) and the CPU kernel level its
job ran at (:data:`CPU_LEVEL_COLUMN`, ``numerics.cpu_level``: tables of other levels hold other numbers).

The workflow passes the profile's name to every job in ``EAD_PROFILE`` (``workflow/rules/common.smk``) and
:meth:`ead.tables.Table.write` stamps it; a table written outside the workflow (no ``EAD_PROFILE``) has no such column.
Figures record it in their metadata (:func:`ead.plots.style.save_figure`).
"""

from __future__ import annotations

import os

from ead.numerics import job_cpu_level

__all__ = ["CONFIG_FILES_COLUMN", "CONFIG_FILES_ENV", "CPU_LEVEL_COLUMN", "PROFILE_COLUMN", "PROFILE_ENV",
           "RUN_COLUMNS", "job_profile", "job_run_columns"]

#: The column naming the profile (``profile:`` of the config) whose run wrote a table; a str where present.
PROFILE_COLUMN = "profile"
#: The environment variable through which the workflow tells every job its profile.
PROFILE_ENV = "EAD_PROFILE"
#: The column naming the config files layered over configs/config.yaml (profile, overlays, their includes; "" for the
#: default profile alone) whose run wrote a table, so a table tells which overlay produced it; with its variable.
CONFIG_FILES_COLUMN = "config_files"
CONFIG_FILES_ENV = "EAD_CONFIG_FILES"
#: The column naming the CPU kernel level the job that wrote a table ran at (``ead.numerics``; ``native``: unpinned).
CPU_LEVEL_COLUMN = "cpu_level"
#: Columns a workflow job stamps into every table it writes (str), declared by no table.
RUN_COLUMNS = (PROFILE_COLUMN, CONFIG_FILES_COLUMN, CPU_LEVEL_COLUMN)


def job_profile() -> str | None:
    """The profile of the workflow run this job belongs to (``EAD_PROFILE``), or None outside the workflow."""
    return os.environ.get(PROFILE_ENV) or None


def job_run_columns() -> dict:
    """The run's columns of a table this job writes: its profile, config files and CPU kernel level (empty outside
    the workflow)."""
    if job_profile() is None:
        return {}
    return {PROFILE_COLUMN: job_profile(), CONFIG_FILES_COLUMN: os.environ.get(CONFIG_FILES_ENV, ""),
            CPU_LEVEL_COLUMN: job_cpu_level()}
