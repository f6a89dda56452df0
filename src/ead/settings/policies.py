"""``policies``: the tiny CPU policies (trained by SFT, sharpened copies of a trained one, or copies sharpened at their
first response tokens only) and their tasks."""

from __future__ import annotations

from ead.data.tasks import get_task, synthetic_tasks, task_names
from ead.settings.base import ConfigError

#: The keys that make a policy a copy of a trained one: every logit / T (ead.models.sharpen), or the first response
#: tokens' logits / T by self-distillation (ead.models.fork_sharpen).
COPY_KINDS = ("sharpen", "fork_sharpen")


def trained_policies(config: dict) -> list[str]:
    """The policies trained by SFT (shape + sft), as opposed to sharpened copies of them."""
    return [name for name, spec in config["policies"].items() if not any(kind in spec for kind in COPY_KINDS)]


def sharpened_policies(config: dict) -> list[str]:
    """The policies that are sharpened copies of a trained one (``policies.<name>.sharpen``)."""
    return [name for name, spec in config["policies"].items() if "sharpen" in spec]


def used_policies(config: dict) -> list[str]:
    """The tiny policies a run uses, in ``policies`` order: those of the RL experiments that run (``rl.experiments``
    after ``rl.run``, CPU backend), the premise probe's, the sampling analyses' models, the measured schedule's and the
    inference-only comparison's, and the trained policy each of them copies (``sharpen.policy``,
    ``fork_sharpen.policy``). The default's ``policies`` stay defined under an overlay that runs other ones; only
    these are evaluated before RL."""
    named = set(config.get("premises", {}).get("policies", []))
    if config["rl"]["backend"] == "cpu":
        named.update(policy for spec in config["rl"]["experiments"].values() for policy in spec["policies"])
    analyses = config.get("analyses", {})
    named.update(model for section in analyses.values() if isinstance(section, dict)
                 for model in section.get("models", []))
    named.update(config.get("measured_schedule", {}).get("policies", []))
    named.update(config.get("inference_only", {}).get("models", []))
    named &= set(config["policies"])
    named |= {config["policies"][name][kind]["policy"] for name in named for kind in ("sharpen", "fork_sharpen")
              if kind in config["policies"][name]}
    return [name for name in config["policies"] if name in named]


def fork_sharpened_policies(config: dict) -> list[str]:
    """The policies that are copies of a trained one sharpened at their first response tokens only
    (``policies.<name>.fork_sharpen``)."""
    return [name for name, spec in config["policies"].items() if "fork_sharpen" in spec]



def sharpening(config: dict, name: str) -> dict:
    """A sharpened policy's ``sharpen`` block: the trained ``policy`` it copies and the ``temperature`` its logits are
    divided by."""
    return config["policies"][name]["sharpen"]


def fork_sharpening(config: dict, name: str) -> dict:
    """A fork-sharpened policy's ``fork_sharpen`` block: the trained ``policy`` it copies, the ``temperature`` its
    first ``positions`` response tokens' logits are divided by, and the distillation's ``steps``, ``batch_size``,
    ``lr`` and ``seed``."""
    return config["policies"][name]["fork_sharpen"]


def fork_sharpen_settings(config: dict, name: str) -> dict:
    """The settings of one fork-sharpened policy's job (``python -m ead.models.fork_sharpen``): its block without the
    source policy (the job's --model)."""
    return {key: value for key, value in fork_sharpening(config, name).items() if key != "policy"}


def policy_task(config: dict, name: str) -> str:
    """The synthetic task a tiny policy is trained and evaluated on: ``policies.<name>.task`` (default countdown); a
    sharpened or fork-sharpened copy has its source's."""
    spec = config["policies"][name]
    for kind in COPY_KINDS:
        if kind in spec:
            return policy_task(config, spec[kind]["policy"])
    return spec.get("task", "countdown")


def sft_settings(config: dict, name: str) -> dict:
    """The settings of one policy's SFT job (``python -m ead.models.sft``): its shape and its sft block, whose
    ``reference`` (which solution of each problem it trains on) is ``random`` unless stated, and the bias of its
    teacher when it has one (``policies.<name>.teacher``: it trains on a biased teacher's responses instead), with its
    execution noise where declared."""
    policy = config["policies"][name]
    settings = {**policy["shape"], "reference": "random", **policy["sft"]}
    if "teacher" in policy:
        settings["teacher_bias"] = policy["teacher"]["bias"]
        if "execution_noise" in policy["teacher"]:  # absent: the exact teacher (and its SFT job's unchanged command)
            settings["teacher_execution_noise"] = policy["teacher"]["execution_noise"]
    return settings


def check_policies(config: dict) -> None:
    """A sharpened or fork-sharpened policy copies a trained one (not another copy, not a missing name), a
    fork-sharpened one a policy of a task the distillation knows; a trained policy's task is a synthetic task
    (ead.data.tasks) with its data section; an SFT reference other than the table's random solution needs a task that
    offers it (countdown's canonical, largest_first), and a biased teacher a task that has one (strategy)."""
    trained = trained_policies(config)
    with_teacher = task_names(lambda task: task.teacher_responses is not None)
    for name in trained:
        task = policy_task(config, name)
        if task not in synthetic_tasks():
            raise ConfigError(f"policies.{name}.task = {task!r} is not a synthetic task ({list(synthetic_tasks())}; "
                              "ead.data.tasks)")
        if task not in config["data"]:
            raise ConfigError(f"policies.{name}.task = {task!r} has no data.{task} section to generate its table from")
        if "teacher" in config["policies"][name] and task not in with_teacher:
            raise ConfigError(f"policies.{name}.teacher needs a task with a biased teacher ({', '.join(with_teacher)}; "
                              f"its task is {task!r})")
        reference = sft_settings(config, name)["reference"]
        offered = ["random", *get_task(task).sft_references]
        if reference not in offered:
            raise ConfigError(f"policies.{name}.sft.reference = {reference!r}: task {task!r} offers {offered}")
    for kind, copies in (("sharpen", sharpened_policies(config)), ("fork_sharpen", fork_sharpened_policies(config))):
        for name in copies:
            source = config["policies"][name][kind]["policy"]
            if source not in trained:
                raise ConfigError(f"policies.{name}.{kind}.policy = {source!r} is not a trained policy "
                                  f"(one with shape and sft; trained: {trained})")
    for name in fork_sharpened_policies(config):
        if not get_task(policy_task(config, name)).fork_sharpen:
            known = task_names(lambda task: task.fork_sharpen)
            raise ConfigError(f"policies.{name}.fork_sharpen: its source is trained on {policy_task(config, name)!r}; "
                              f"ead.models.fork_sharpen distils on the train split of {', '.join(known)}")
