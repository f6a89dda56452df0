"""Our grader as verl's reward: ``reward.custom_reward_function.path=pkg://ead.rl.verl.reward``.

verl 0.9.1's reward loop calls ``compute_score(data_source=..., solution_str=..., ground_truth=..., extra_info=...)``
(``experimental/reward_loop/reward_manager/naive.py``) and, when it gets a dict, uses ``result["score"]`` as the
reward and keeps every key as a per-sample "reward extra info". Validation metrics are computed per key
(``trainer/ppo/metric_utils.py``, ``process_validation_metrics``): returning ``acc`` makes it the core validation
variable (``val-core/<data_source>/acc/mean@16``, ``best@16/mean``, ...), and ``pred`` (the normalised answer) enables
verl's majority-vote metrics. The same :func:`ead.rewards.grade` grades CPU-backend rollouts and evaluations.

The grader's status reaches verl too: ``status`` (correct, wrong, no_answer, timeout, error; a string, so verl's
validation metrics skip it and its dumps keep it) and ``timeout`` (1.0 for an answer that timed out, which scored 0
without saying it was wrong: verl reports its validation mean per data source, ``val-aux/<source>/timeout/mean@N``,
and ``ead.rl.verl.convert`` counts it per problem from the dumps). Each reward worker process also keeps its own
counts and fails the run (:class:`ead.rewards.TooManyTimeouts`) once its share of timeouts passes
``grader.max_timeout_share`` over at least :data:`MIN_ANSWERS_FOR_SHARE` answers.

Grader settings arrive as keyword arguments ``grader_<setting>=value`` (``ead.rl.verl.overrides`` sets
``reward.custom_reward_function.reward_kwargs`` from the config's ``grader:`` section); the first call in each
reward worker process configures the shared grader with them.
"""

from __future__ import annotations

import logging
from collections import Counter
from threading import Lock

from ead.data.tasks import tasks
from ead.rewards import configure_grader, get_grader, report_grades, status_counts

__all__ = ["MIN_ANSWERS_FOR_SHARE", "compute_score"]

#: A reward process judges its share of timeouts only after this many answers (one early timeout is not a share).
MIN_ANSWERS_FOR_SHARE = 200
_statuses: Counter = Counter()
_statuses_lock = Lock()
_log = logging.getLogger("ead.rl.verl.reward")


def compute_score(data_source: str, solution_str: str, ground_truth: str, extra_info: dict | None = None,
                  **kwargs) -> dict:
    """{"score", "acc", "pred"} for one response. ``data_source`` names the grader task (math for paper data)."""
    settings = {key.removeprefix("grader_"): value for key, value in kwargs.items() if key.startswith("grader_")}
    if settings:
        configure_grader(settings)  # a no-op once the shared grader runs with these settings
    task = (extra_info or {}).get("task") or data_source
    if task not in tasks():  # every reward call: a dict lookup
        raise ValueError(f"compute_score: data_source/task {task!r} is not a grader task; known: {sorted(tasks())}")
    result = get_grader().grade(solution_str, str(ground_truth), task)
    with _statuses_lock:
        _statuses[result.status] += 1
        counts = status_counts(_statuses.elements())
    if result.status == "timeout":  # logs the counts; raises TooManyTimeouts past the bound
        report_grades(counts, "verl reward process", _log,
                      max_timeout_share=None if sum(counts.values()) >= MIN_ANSWERS_FOR_SHARE else 1.0)
    return {"score": float(result.score), "acc": float(result.score), "pred": result.predicted or "",
            "status": result.status, "timeout": float(result.status == "timeout")}
