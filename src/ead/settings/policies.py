"""``policies``: the tiny CPU policies (trained by SFT, or sharpened copies of a trained one) and their tasks."""

from __future__ import annotations

from ead.settings.base import ConfigError


def trained_policies(config: dict) -> list[str]:
    """The policies trained by SFT (shape + sft), as opposed to sharpened copies of them."""
    return [name for name, spec in config["policies"].items() if "sharpen" not in spec]


def sharpened_policies(config: dict) -> list[str]:
    """The policies that are sharpened copies of a trained one (``policies.<name>.sharpen``)."""
    return [name for name, spec in config["policies"].items() if "sharpen" in spec]


def used_policies(config: dict) -> list[str]:
    """The tiny policies a run uses, in ``policies`` order: those of the RL experiments that run (``rl.experiments``
    after ``rl.run``, CPU backend), the premise probe's, the sampling analyses' models, the measured schedule's and the
    inference-only comparison's, and the trained policy each of them copies (``sharpen.policy``). The default's
    ``policies`` stay defined under an overlay that runs other ones; only these are evaluated before RL."""
    named = set(config.get("premises", {}).get("policies", []))
    if config["rl"]["backend"] == "cpu":
        named.update(policy for spec in config["rl"]["experiments"].values() for policy in spec["policies"])
    analyses = config.get("analyses", {})
    named.update(model for section in analyses.values() if isinstance(section, dict)
                 for model in section.get("models", []))
    named.update(config.get("measured_schedule", {}).get("policies", []))
    named.update(config.get("inference_only", {}).get("models", []))
    named &= set(config["policies"])
    named |= {config["policies"][name]["sharpen"]["policy"] for name in named if "sharpen" in config["policies"][name]}
    return [name for name in config["policies"] if name in named]


def sharpening(config: dict, name: str) -> dict:
    """A sharpened policy's ``sharpen`` block: the trained ``policy`` it copies and the ``temperature`` its logits are
    divided by."""
    return config["policies"][name]["sharpen"]


def policy_task(config: dict, name: str) -> str:
    """The synthetic task a tiny policy is trained and evaluated on: ``policies.<name>.task`` (default countdown); a
    sharpened copy has its source's."""
    spec = config["policies"][name]
    if "sharpen" in spec:
        return policy_task(config, spec["sharpen"]["policy"])
    return spec.get("task", "countdown")


def sft_settings(config: dict, name: str) -> dict:
    """The settings of one policy's SFT job (``python -m ead.models.sft``): its shape and its sft block, whose
    ``reference`` (which solution of each problem it trains on) is ``random`` unless stated, and the bias of its
    teacher when it has one (``policies.<name>.teacher``: it trains on a biased teacher's responses instead)."""
    policy = config["policies"][name]
    settings = {**policy["shape"], "reference": "random", **policy["sft"]}
    if "teacher" in policy:
        settings["teacher_bias"] = policy["teacher"]["bias"]
    return settings


def check_policies(config: dict) -> None:
    """A sharpened policy copies a trained one (not another copy, not a missing name); a trained policy's task has
    its data section; an SFT reference other than the table's random solution (canonical, largest_first) needs the
    countdown task, and a biased teacher the strategy task."""
    trained = trained_policies(config)
    for name in trained:
        task = policy_task(config, name)
        if task not in config["data"]:
            raise ConfigError(f"policies.{name}.task = {task!r} has no data.{task} section to generate its table from")
        if "teacher" in config["policies"][name] and task != "strategy":
            raise ConfigError(f"policies.{name}.teacher needs task strategy (its task is {task!r}): the biased "
                              f"teacher picks among the strategy task's strategies")
        reference = config["policies"][name]["sft"].get("reference", "random")
        if reference != "random" and policy_task(config, name) != "countdown":
            raise ConfigError(f"policies.{name}.sft.reference = {reference!r} needs task countdown (its task is "
                              f"{policy_task(config, name)!r}): only countdown problems have solution trees to "
                              f"choose from")
    for name in sharpened_policies(config):
        source = config["policies"][name]["sharpen"]["policy"]
        if source not in trained:
            raise ConfigError(f"policies.{name}.sharpen.policy = {source!r} is not a trained policy "
                              f"(one with shape and sft; trained: {trained})")
