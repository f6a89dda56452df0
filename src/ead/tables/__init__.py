"""The results contract: every result table, declared once, and the machinery that reads, checks and writes it.

* :mod:`ead.tables.schema`: a table's declaration (:class:`Table`: columns and their kinds, key, finite columns,
  bounds, the rows it must hold), reading, validating and writing it, and the errors a broken table raises;
* :mod:`ead.tables.declarations`: every result table of the reproduction and the columns they share;
* :mod:`ead.tables.provenance`: which run wrote a table (its profile and config files), stamped by every writer.

Both RL backends (:mod:`ead.rl.train` on CPU, :mod:`ead.rl.verl.convert` for verl runs), the evaluation job
(:mod:`ead.evaluation`), the aggregation (:mod:`ead.rl.aggregate`), the analyses (:mod:`ead.analyses`) and the
figures (:mod:`ead.plots`) depend on this package and never on each other. It imports pandas, numpy and
:mod:`ead.io` only (no torch, no transformers), so converting a GPU run's logs loads no model code. The per-problem
counts these tables hold become Pass@k / Worst@k in :mod:`ead.metrics` (:func:`ead.metrics.per_problem_metric`,
:func:`ead.metrics.pass_worst_summary`).

Readers and writers import what they use from here: ``from ead.tables import STEPS``.
"""

from ead.tables.declarations import (
    ALL_TRAIN_METRICS,
    BASE_FAILURES,
    BASE_PROBLEMS,
    BASE_SUMMARY,
    CELL_COLUMNS,
    CLAIMS,
    CONFIG_COLUMNS,
    COUNT_BOUNDS,
    COUNT_COLUMNS,
    ENTROPY_BY_POSITION,
    ENTROPY_BY_ROLE,
    ENTROPY_SAMPLES,
    EVAL,
    EVAL_BY_GROUP,
    EVAL_CURVES,
    EVAL_FAILURES,
    EVAL_PROBLEMS,
    EVALUATED_WITH,
    FAILURE_COLUMNS,
    FAILURE_METRIC_PREFIX,
    FAILURE_OK,
    FINGERPRINT,
    FORKING,
    FORKING_SAMPLES,
    GROUP,
    INFERENCE_ONLY,
    INFERENCE_ONLY_HEADLINE,
    LATER_TRAIN_METRICS,
    MACHINE_SPREAD,
    MAJORITY_SAMPLES,
    MAJORITY_SCALING,
    MEASURED_SCHEDULE,
    PAIRED_CURVES,
    PREMISE_TRADEOFF,
    PREMISE_TRADEOFF_RHO,
    PREMISE_VERDICTS,
    PREMISES,
    PREMISES_BY_GROUP,
    PROBLEM_COLUMNS,
    RL_LEARNS,
    SAMPLER_SCHEDULES,
    SCHEDULE_TABLE,
    SETTINGS_COLUMNS,
    SIGNAL_BY_PHASE,
    STATUS_COLUMN,
    STEPS,
    TABLES,
    TIMEOUT_PROBLEM_COLUMN,
    TIMEOUT_STEP_COLUMN,
    TIMING_COLUMNS,
    TRAIN_CURVES,
    TRAIN_METRICS,
    evaluated_steps,
    expected_eval_steps,
    expected_steps,
)
from ead.tables.provenance import (
    CONFIG_FILES_COLUMN,
    CONFIG_FILES_ENV,
    CPU_LEVEL_COLUMN,
    PROFILE_COLUMN,
    PROFILE_ENV,
    RUN_COLUMNS,
    job_profile,
    job_run_columns,
)
from ead.tables.schema import (
    KINDS,
    Bound,
    Coverage,
    DuplicateRowError,
    Empty,
    Expected,
    IncompleteTableError,
    NonFiniteValueError,
    OutOfRangeError,
    Table,
    TableError,
)

__all__ = [
    "ALL_TRAIN_METRICS", "BASE_FAILURES", "BASE_PROBLEMS", "BASE_SUMMARY", "CELL_COLUMNS", "CLAIMS", "CONFIG_COLUMNS",
    "COUNT_BOUNDS", "COUNT_COLUMNS", "ENTROPY_BY_POSITION", "ENTROPY_BY_ROLE", "ENTROPY_SAMPLES", "EVAL",
    "EVAL_BY_GROUP", "EVAL_CURVES", "EVAL_FAILURES", "EVAL_PROBLEMS", "EVALUATED_WITH", "FAILURE_COLUMNS",
    "FAILURE_METRIC_PREFIX", "FAILURE_OK", "FINGERPRINT", "FORKING", "FORKING_SAMPLES", "GROUP", "INFERENCE_ONLY",
    "INFERENCE_ONLY_HEADLINE", "LATER_TRAIN_METRICS", "MACHINE_SPREAD", "MAJORITY_SAMPLES", "MAJORITY_SCALING",
    "MEASURED_SCHEDULE", "PAIRED_CURVES", "PREMISE_TRADEOFF", "PREMISE_TRADEOFF_RHO", "PREMISE_VERDICTS", "PREMISES",
    "PREMISES_BY_GROUP", "PROBLEM_COLUMNS", "RL_LEARNS", "SAMPLER_SCHEDULES", "SCHEDULE_TABLE", "SETTINGS_COLUMNS",
    "SIGNAL_BY_PHASE", "STATUS_COLUMN", "STEPS", "TABLES", "TIMEOUT_PROBLEM_COLUMN", "TIMEOUT_STEP_COLUMN",
    "TIMING_COLUMNS", "TRAIN_CURVES", "TRAIN_METRICS", "evaluated_steps", "expected_eval_steps", "expected_steps",
    "CONFIG_FILES_COLUMN", "CONFIG_FILES_ENV", "CPU_LEVEL_COLUMN", "PROFILE_COLUMN", "PROFILE_ENV", "RUN_COLUMNS",
    "job_profile", "job_run_columns",
    "KINDS", "Bound", "Coverage", "DuplicateRowError", "Empty", "Expected", "IncompleteTableError",
    "NonFiniteValueError", "OutOfRangeError", "Table", "TableError",
]
