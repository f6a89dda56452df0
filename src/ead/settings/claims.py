"""The rules of what reads the RL grid: the claims (``claims``, with ``claim_defaults`` filled in), premise G4
(``rl_learns``), ``paired_baselines`` and ``rl.breakdown``: every cell they compare is in the grid, and every metric's
k is one the cells evaluate (:func:`check_metric_k`, the one home of "k <= rl.eval.n").
"""

from __future__ import annotations

from ead.metrics import COUNT_METRIC
from ead.settings.base import ConfigError
from ead.settings.evaluation import evaluates_with_own_sampler
from ead.settings.rl import expand_grid
from ead.tables import ALL_TRAIN_METRICS


def check_rl_learns(config: dict) -> None:
    """Premise G4 (``rl_learns``): its sampler is one of rl.samplers, its metric an evaluation metric the cells can
    give, and its thresholds are ordered (the CI bound it must clear is at most the mean it claims)."""
    learns = config.get("rl_learns")
    if not learns:
        return
    if learns["sampler"] not in config["rl"]["samplers"]:
        raise ConfigError(f"rl_learns.sampler = {learns['sampler']!r} is not defined in rl.samplers (known: "
                          f"{sorted(config['rl']['samplers'])})")
    if not check_metric_k(config, "rl_learns.metric", learns["metric"]) and learns["metric"] != "greedy_accuracy":
        raise ConfigError(f"rl_learns.metric = {learns['metric']!r}: not pass@k, worst@k or greedy_accuracy (an "
                          "evaluation metric at step 0 and the last step)")
    if learns["min_ci_low"] > learns["min_effect"]:
        raise ConfigError(f"rl_learns.min_ci_low = {learns['min_ci_low']} exceeds rl_learns.min_effect = "
                          f"{learns['min_effect']} (the CI's lower bound it must clear sits below the mean it claims)")


def check_metric_k(config: dict, key: str, metric: str) -> bool:
    """Whether ``metric`` (the value of config key ``key``) is pass@k / worst@k; ConfigError if its k exceeds
    ``rl.eval.n``, the samples each evaluation draws per problem, with the ``--config`` pairs that fix it (the one
    home of this check: claims, best_of claims, rl_learns and rl.breakdown call it)."""
    match = COUNT_METRIC.fullmatch(metric)
    if match and int(match[2]) > config["rl"]["eval"]["n"]:
        k = match[2]
        raise ConfigError(f"{key} = {metric!r}: k exceeds rl.eval.n = {config['rl']['eval']['n']} samples; evaluate "
                          f"more samples per problem (e.g. --config rl__eval__n={k} rl__eval__k='[1, {k}]') or use a "
                          "k <= rl.eval.n", suggested_overrides={"rl__eval__n": k, "rl__eval__k": f"[1, {k}]"})
    return match is not None


def check_breakdown(config: dict) -> None:
    """``rl.breakdown``: the CPU backend (whose steps.csv records the per-step signal columns and whose task has a data
    table), at most one phase per training step, steps.csv metrics, and an evaluation metric the cells can give."""
    breakdown = config["rl"].get("breakdown")
    if not breakdown:
        return
    if config["rl"]["backend"] != "cpu":
        raise ConfigError("rl.breakdown reads the CPU backend's per-step signal columns and its task's data table; "
                          f"rl.backend is {config['rl']['backend']!r}")
    if breakdown["phases"] > config["rl"]["steps"]:
        raise ConfigError(f"rl.breakdown.phases = {breakdown['phases']} exceeds rl.steps = {config['rl']['steps']} "
                          "(a phase holds at least one training step)")
    unknown = [metric for metric in breakdown["train_metrics"] if metric not in ALL_TRAIN_METRICS]
    if unknown:
        raise ConfigError(f"rl.breakdown.train_metrics: {unknown} are not steps.csv training metrics (known: "
                          f"{ALL_TRAIN_METRICS})")
    if not check_metric_k(config, "rl.breakdown.metric", breakdown["metric"]) and breakdown["metric"] != \
            "greedy_accuracy":
        raise ConfigError(f"rl.breakdown.metric = {breakdown['metric']!r}: not pass@k, worst@k or greedy_accuracy")


def check_paired_baselines(config: dict) -> None:
    """``paired_baselines`` (the baselines of the paired-difference curves, ead.rl.paired) are samplers of
    ``rl.samplers``."""
    known = config["rl"]["samplers"]
    for index, name in enumerate(config["paired_baselines"]):
        if name not in known:
            raise ConfigError(f"paired_baselines[{index}] = {name!r} is not a sampler of rl.samplers (known: "
                              f"{sorted(known)})")


def baseline_algorithm(claim: dict) -> str:
    """The algorithm of an RL claim's baseline cell: its ``baseline_algorithm``, else the claim's ``algorithm``."""
    return claim.get("baseline_algorithm", claim["algorithm"])


def claim_over(claim: dict) -> str:
    """Where an RL claim reads its metric: ``over`` as stated, else ``last`` (the last step; the one default)."""
    return claim.get("over", "last")


def claim_evaluation(claim: dict) -> str:
    """Which evaluation an RL claim reads: ``evaluated_with`` as stated, else ``eval_tau`` (the declared rl.eval.tau,
    what the figures draw; the one default)."""
    return claim.get("evaluated_with", "eval_tau")


def _check_claim_seeds(config: dict, key: str, claim: dict) -> None:
    """A claim's ``seeds`` are seeds the grid runs for every cell it compares (the sampler's, the baseline's or each
    best_of candidate's)."""
    names = [claim["sampler"], *claim.get("best_of", []), *([claim["baseline"]] if "baseline" in claim else [])]
    for name in names:
        algorithm = claim["algorithm"] if name == claim["sampler"] else baseline_algorithm(claim)
        ran = {c.seed for c in expand_grid(config["rl"])
               if (c.policy, c.algorithm, c.sampler, c.n) == (claim["policy"], algorithm, name, claim["n"])}
        missing = sorted(set(claim["seeds"]) - ran)
        if missing:
            raise ConfigError(f"{key}.seeds: {missing} are not seeds of the cell ({claim['policy']}, {algorithm}, "
                              f"{name}, n{claim['n']}) in the grid of rl.experiments (it runs seeds {sorted(ran)})")


def check_claims(config: dict) -> None:
    """Every claim compares two cells of the grid (any seed) on a metric the grid records."""
    grid = {(c.policy, c.algorithm, c.sampler, c.n) for c in expand_grid(config["rl"])}
    seen = set()
    for index, claim in enumerate(config["claims"]):
        key = f"claims[{index}] ({claim['id']})"
        if claim["id"] in seen:
            raise ConfigError(f"{key}: the id {claim['id']!r} is used twice")
        seen.add(claim["id"])
        if sum(other in claim for other in ("baseline", "threshold", "best_of")) != 1:
            raise ConfigError(f"{key}: a claim compares its sampler with a `baseline` cell, with the best of several "
                              "(`best_of`), or its one cell with a `threshold`: exactly one of the three")
        roles = (("sampler", claim["algorithm"]), *((("baseline", baseline_algorithm(claim)),) if "baseline" in claim
                                                    else ()))
        for role, algorithm in roles:
            cell = (claim["policy"], algorithm, claim[role], claim["n"])
            if cell not in grid:
                raise ConfigError(f"{key}.{role}: the cell (policy, algorithm, sampler, n) = {cell} is not in the grid "
                                  "of rl.experiments")
        if "seeds" in claim:
            _check_claim_seeds(config, key, claim)
        if "best_of" in claim:
            _check_best_of(config, key, claim, grid)
        elif "selection" in claim:
            raise ConfigError(f"{key}.selection: only a best_of claim chooses its baseline by a selection rule")
        metric = claim["metric"]
        counts = check_metric_k(config, f"{key}.metric", metric)
        if not counts and metric != "greedy_accuracy" and metric not in ALL_TRAIN_METRICS:
            raise ConfigError(f"{key}.metric = {metric!r}: not pass@k, worst@k (or verl's verl_best@k, verl_worst@k), "
                              f"greedy_accuracy or one of the training metrics {ALL_TRAIN_METRICS}")
        if claim_over(claim) == "curve":
            if metric in ALL_TRAIN_METRICS or "threshold" in claim:
                what = "is a training metric" if metric in ALL_TRAIN_METRICS else "is a threshold claim"
                raise ConfigError(f"{key}.over = 'curve': only a paired claim on an evaluation metric averages over "
                                  f"the learning curve ({metric!r} {what})")
            if claim_evaluation(claim) == "own_sampler":
                raise ConfigError(f"{key}.over = 'curve': the own-sampler evaluation exists at the last step only; use "
                                  "over: last or evaluated_with: eval_tau")
        evaluated_with = claim_evaluation(claim)
        if evaluated_with in ("own_sampler", "train_pool") and metric in ALL_TRAIN_METRICS:
            raise ConfigError(f"{key}.evaluated_with = {evaluated_with!r}: {metric!r} is a training metric, not an "
                              "evaluation")
        if evaluated_with == "train_pool" and not config["rl"].get("train_pool"):
            raise ConfigError(f"{key}.evaluated_with = 'train_pool' needs rl.train_pool (the cells' fixed pool of "
                              "training problems, which they evaluate beside the held-out ones)")
        if evaluated_with == "own_sampler" and not evaluates_with_own_sampler(config["rl"]):
            raise ConfigError(f"{key}.evaluated_with = 'own_sampler' needs rl.eval.own_sampler: true (the cells' "
                              "last-step evaluation with their own sampler)")


def _check_best_of(config: dict, key: str, claim: dict, grid: set) -> None:
    """A ``best_of`` claim (ead.claims.rl.best_of_difference): two or more candidate cells in the grid, none the
    claim's sampler, an evaluation metric to compare, and a declared selection (metric, fraction, seed)."""
    candidates = claim["best_of"]
    if len(set(candidates)) != len(candidates) or len(candidates) < 2:
        raise ConfigError(f"{key}.best_of = {candidates}: name two or more distinct candidate samplers")
    if claim["sampler"] in candidates:
        raise ConfigError(f"{key}.best_of = {candidates} contains the claim's own sampler {claim['sampler']!r}")
    for candidate in candidates:
        cell = (claim["policy"], baseline_algorithm(claim), candidate, claim["n"])
        if cell not in grid:
            raise ConfigError(f"{key}.best_of: the cell (policy, algorithm, sampler, n) = {cell} is not in the grid of "
                              "rl.experiments")
    if "selection" not in claim:
        raise ConfigError(f"{key}: a best_of claim declares its selection rule: selection: {{metric: pass@16, "
                          "fraction: 0.5, seed: 0}} (the candidate best on that share of the evaluation problems is "
                          "the baseline; the rest report)")
    for name, metric in (("metric", claim["metric"]), ("selection.metric", claim["selection"]["metric"])):
        if not check_metric_k(config, f"{key}.{name}", metric) and metric != "greedy_accuracy":
            raise ConfigError(f"{key}.{name} = {metric!r}: a best_of claim chooses and compares on the evaluation "
                              "problems, so pass@k, worst@k or greedy_accuracy")
