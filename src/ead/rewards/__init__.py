"""The one grader: scores a response against a reference, for evaluation AND as the RL reward.

``grade(response, reference, task) -> Grade(score, predicted, status)``; ``grade_many`` for batches;
``same_answer`` merges equivalent vote keys for Maj@N. ``task`` is a task of :mod:`ead.data.tasks` (the ``source``
column of the data tables), graded as its ``grading`` says: ``math`` (math-verify: math, math500, gsm8k,
arithmetic), ``choice`` (the letter: mmlu, arc_easy, arc_challenge) or ``verifier`` (the task's own: countdown's
verified chain, strategy's key strategy exactly executed). What is extracted and how: docs/method.md, "Grading".

Modules: :mod:`~ead.rewards.extraction` (what is read from a response and a reference: tail, last box,
math-verify's extraction configs, MMLU letters), :mod:`~ead.rewards.worker` (math-verify
in subprocesses under a CPU-time budget), :mod:`~ead.rewards.grader` (the policy: tasks, settings, pool,
cache, vote keys). Settings are the config's ``grader:`` section, in an RL cell's settings document or passed to the
other jobs as ``--grader JSON``, and applied with :func:`configure_grader`.

Run one check from the shell: ``python -m ead.rewards --task math --reference 1/2 'so \\boxed{0.5}'``.
"""

from ead.data.answers import extract_boxed
from ead.rewards.extraction import TAIL_CHARS, extract_choice
from ead.rewards.grader import (
    STATUSES,
    Grade,
    Grader,
    GraderSettings,
    TooManyTimeouts,
    add_grader_argument,
    configure_grader,
    get_grader,
    grade,
    grade_many,
    report_grades,
    same_answer,
    status_counts,
)

__all__ = [
    "Grade",
    "Grader",
    "GraderSettings",
    "STATUSES",
    "TAIL_CHARS",
    "TooManyTimeouts",
    "add_grader_argument",
    "configure_grader",
    "extract_boxed",
    "extract_choice",
    "get_grader",
    "grade",
    "grade_many",
    "report_grades",
    "same_answer",
    "status_counts",
]
