"""Our grader as verl's reward: ``reward.custom_reward_function.path=pkg://ead.rl.verl.reward``.

verl 0.9.1's reward loop calls ``compute_score(data_source=..., solution_str=..., ground_truth=..., extra_info=...)``
(``experimental/reward_loop/reward_manager/naive.py``) and, when it gets a dict, uses ``result["score"]`` as the
reward and keeps every key as a per-sample "reward extra info". Validation metrics are computed per key
(``trainer/ppo/metric_utils.py``, ``process_validation_metrics``): returning ``acc`` makes it the core validation
variable (``val-core/<data_source>/acc/mean@16``, ``best@16/mean``, ...), and ``pred`` (the normalised answer) enables
verl's majority-vote metrics. The same :func:`ead.rewards.grade` grades CPU-backend rollouts and evaluations.

Grader settings arrive as keyword arguments ``grader_<setting>=value`` (``ead.rl.verl.overrides`` sets
``reward.custom_reward_function.reward_kwargs`` from the config's ``grader:`` section); the first call in each
reward worker process configures the shared grader with them.
"""

from __future__ import annotations

from ead.rewards import TASKS, configure_grader, get_grader

__all__ = ["compute_score"]


def compute_score(data_source: str, solution_str: str, ground_truth: str, extra_info: dict | None = None,
                  **kwargs) -> dict:
    """{"score", "acc", "pred"} for one response. ``data_source`` names the grader task (math for paper data)."""
    settings = {key.removeprefix("grader_"): value for key, value in kwargs.items() if key.startswith("grader_")}
    if settings:
        configure_grader(settings)  # a no-op once the shared grader runs with these settings
    task = (extra_info or {}).get("task") or data_source
    if task not in TASKS:
        raise ValueError(f"compute_score: data_source/task {task!r} is not a grader task; known: {sorted(TASKS)}")
    result = get_grader().grade(solution_str, str(ground_truth), task)
    return {"score": float(result.score), "acc": float(result.score), "pred": result.predicted or ""}
