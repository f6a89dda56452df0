"""results/summary.md is rendered from the result tables: every quoted number is the table's, with its CI."""

import pandas as pd
import pytest

from ead.summary import entropy_roles_section, main, render
from ead.tables import BASE_SUMMARY, ENTROPY_BY_ROLE, EVAL_CURVES, MAJORITY_SCALING, PREMISE_VERDICTS, RL_LEARNS
from tests.conftest import FILLER, load


def declared(table: pd.DataFrame, declaration) -> pd.DataFrame:
    """``table`` plus filler values for the declared columns this test does not read."""
    return table.assign(**{column: FILLER[kind] for column, kind in declaration.columns.items()
                           if column not in table.columns})


def test_summary_quotes_the_tables_values_with_their_cis(tmp_path):
    settings = dict(task="countdown", num_problems=500, n=16, schedule="fixed", split="val",
                    schedule_params='{"name": "fixed", "tau": 1.0}', mean_response_tokens=31.6)
    base = pd.DataFrame([("greedy_accuracy", 0.16, 0.13, 0.192), ("pass@1", 0.079, 0.07, 0.089),
                         ("pass@16", 0.532, 0.488, 0.578), ("worst@16", 0.0, 0.0, 0.0)],
                        columns=["metric", "value", "ci_low", "ci_high"]).assign(**settings)
    BASE_SUMMARY.write(declared(base, BASE_SUMMARY), tmp_path / "tiny1m_base.csv")
    cell = dict(policy="tiny1m", algorithm="dapo", sampler="ead_tis", n=8, num_seeds=3, evaluated_with="eval_tau")
    own = {**cell, "evaluated_with": "own_sampler"}
    pool = {**cell, "evaluated_with": "train_pool"}  # rl.train_pool: the cell's evaluation on its training pool
    curves = pd.DataFrame([
        {**own, "step": 16, "metric": "pass@1", "value": 0.2, "ci_low": 0.15, "ci_high": 0.25},  # its own row
        {**pool, "step": 16, "metric": "pass@1", "value": 0.3, "ci_low": 0.25, "ci_high": 0.35},
        {**cell, "step": 8, "metric": "pass@1", "value": 0.5, "ci_low": 0.4, "ci_high": 0.6},  # not the last step
        {**cell, "step": 16, "metric": "pass@1", "value": 0.114, "ci_low": 0.089, "ci_high": 0.141},
        {**cell, "step": 16, "metric": "pass@16", "value": 0.591, "ci_low": 0.513, "ci_high": 0.672},
    ])
    EVAL_CURVES.write(declared(curves, EVAL_CURVES), tmp_path / "eval_curves.csv")
    majority = pd.DataFrame([dict(model_name="m", sampler="EAD", n=n, maj_at_n=v, ci_low=v - 0.1, ci_high=v + 0.1,
                                  no_answer_rate=0.25) for n, v in ((1, 0.2), (2, 0.3), (8, 0.45))])
    MAJORITY_SCALING.write(declared(majority, MAJORITY_SCALING), tmp_path / "majority.csv")
    verdicts = pd.DataFrame([dict(premise="G3", part="EAD raises informative groups at step 1", effect=0.0123,
                                  ci_low=0.004, ci_high=0.0201, mde=0.0061, threshold=0.0, verdict="supported",
                                  rule="95% CI [0.004, 0.0201] entirely > 0", model="results/models/tiny1m")])
    PREMISE_VERDICTS.write(declared(verdicts, PREMISE_VERDICTS), tmp_path / "tiny1m_verdicts.csv")
    learns = pd.DataFrame([dict(premise="G4", part="RL learns here", policy="tiny1m_sharp", algorithm="dapo", n=8,
                                sampler="tau1.0", metric="pass@1", step=16, effect=0.0123, ci_low=-0.0051,
                                ci_high=0.0302, standard_error=0.009, mde=0.0252, min_effect=0.08, min_ci_low=0.05,
                                num_seeds=6, num_problems=128, verdict="contradicted",
                                rule="mean 0.0123, 95% CI [-0.0051, 0.0302]: CI high < 0.08")])
    RL_LEARNS.write(declared(learns, RL_LEARNS), tmp_path / "rl_learns.csv")
    # G4's rule on a fixed training pool, its own table: rendered after G4, labelled
    on_pool = learns.assign(part="RL learns here: tau1.0's pass@1 at step 16 minus step 0 (training pool)",
                            effect=0.094, ci_low=0.055, ci_high=0.135, num_problems=64, verdict="supported")
    RL_LEARNS.write(declared(on_pool, RL_LEARNS), tmp_path / "rl_learns_train_pool.csv")
    out = tmp_path / "summary.md"
    main(["--profile", "smoke", "--results-meaning", "plumbing", "--rerun",
          "snakemake --cores all --configfile configs/smoke.yaml",
          "--base-eval", str(tmp_path / "tiny1m_base.csv"), "--eval-curves",
          str(tmp_path / "eval_curves.csv"), "--entropy", "--entropy-roles", "--forking", "--premises",
          str(tmp_path / "tiny1m_verdicts.csv"), "--premise-metrics", "--claims",
          "--rl-learns", str(tmp_path / "rl_learns.csv"), str(tmp_path / "rl_learns_train_pool.csv"),
          "--majority", str(tmp_path / "majority.csv"),
          "--out", str(out)])
    text = out.read_text()
    assert "(profile: smoke)" in text
    assert "rerun `snakemake --cores all --configfile configs/smoke.yaml` to refresh" in text  # the run's own command
    assert ("| tiny1m | 500 x 16 | 16.0 [13.0, 19.2] | 7.9 [7.0, 8.9] | 53.2 [48.8, 57.8] | 0.0 [0.0, 0.0] | 32 |"
            in text)
    # the last evaluated step of the cell, not an earlier one
    assert "| tiny1m | dapo | ead_tis | 8 | eval tau | 16 | 3 | 11.4 [8.9, 14.1] | 59.1 [51.3, 67.2] |" in text
    assert "| tiny1m | dapo | ead_tis | 8 | own sampler | 16 | 3 | 20.0 [15.0, 25.0] |  |" in text
    assert "| tiny1m | dapo | ead_tis | 8 | training pool | 16 | 3 | 30.0 [25.0, 35.0] |  |" in text
    assert "50.0 [40.0, 60.0]" not in text
    assert "| m | EAD | 20.0 [10.0, 30.0] | 8 | 45.0 [35.0, 55.0] | 25% |" in text
    assert ("| tiny1m | G3 | EAD raises informative groups at step 1 | +0.0123 [+0.0040, +0.0201] | 0.0061 | "
            "**supported** | 95% CI [0.004, 0.0201] entirely > 0 |") in text
    # premise G4 in points, with its CI, MDE, seeds x problems and the thresholds it was read against
    assert ("| tiny1m_sharp / dapo / n 8 | tau1.0 | pass@1, step 16 - step 0 | +1.2 [-0.5, +3.0] | 2.5 | 6 x 128 | "
            "**contradicted** | mean 0.0123, 95% CI [-0.0051, 0.0302]: CI high < 0.08 |") in text
    assert ("| tiny1m_sharp / dapo / n 8 | tau1.0 | pass@1, step 16 - step 0 (training pool) | +9.4 [+5.5, +13.5] "
            "| 2.5 | 6 x 64 | **supported** |") in text
    assert "supported at >= 8 points with the CI's low end above 5" in text
    assert "Forking" not in text and "Entropy" not in text  # sections without tables are left out


def test_the_grid_breakdowns_are_rendered_only_when_given(tmp_path):
    from ead.tables import EVAL_BY_GROUP, SIGNAL_BY_PHASE

    setting = dict(policy="tiny_strategy", algorithm="dapo", n=8, num_seeds=6)
    signal = pd.DataFrame([{**setting, "sampler": sampler, "metric": "informative_group_fraction", "phase": phase,
                            "first_step": 4 * phase - 3, "last_step": 4 * phase, "value": value,
                            "ci_low": value - 0.01, "ci_high": value + 0.02}
                           for sampler, values in (("ead", (0.477, 0.464)), ("tau1.0", (0.411, 0.31)))
                           for phase, value in zip((1, 2), values)])
    SIGNAL_BY_PHASE.write(signal, tmp_path / "signal.csv")
    groups = pd.DataFrame([{**setting, "sampler": "ead", "step": step, "group_by": "key", "group": key,
                            "metric": "pass@1", "value": value, "ci_low": value - 0.05, "ci_high": value + 0.05,
                            "num_problems": problems}
                           for key, problems, values in (("*", 24, (0.154, 0.895)), ("/", 20, (0.019, 0.029)))
                           for step, value in zip((0, 8, 16), (values[0], 0.5, values[1]))])
    EVAL_BY_GROUP.write(groups, tmp_path / "groups.csv")
    empty = ["--results-meaning", "findings", "--base-eval", "--eval-curves",
             "--entropy", "--entropy-roles", "--forking", "--premises",
             "--premise-metrics", "--claims", "--rl-learns", "--majority"]
    out = tmp_path / "summary.md"
    main(["--profile", "positive_control", "--rerun", "snakemake", *empty, "--signal-by-phase",
          str(tmp_path / "signal.csv"), "--eval-by-group", str(tmp_path / "groups.csv"), "--out", str(out)])
    text = out.read_text()
    assert "| setting | metric | sampler | seeds | steps 1-4 | steps 5-8 |" in text
    assert ("| tiny_strategy / dapo / n 8 | informative_group_fraction | ead | 6 | 0.477 [0.467, 0.497] | "
            "0.464 [0.454, 0.484] |") in text
    assert "| tiny_strategy / dapo / n 8 | informative_group_fraction | tau1.0 | 6 | 0.411 [0.401, 0.431] |" in text
    # the first and the last evaluated step, in percent; a group's value in code quotes (a Markdown `*`)
    assert "| setting | sampler | key | seeds x problems | pass@1 (%), step 0 | pass@1 (%), step 16 |" in text
    assert "| tiny_strategy / dapo / n 8 | ead | `*` | 6 x 24 | 15.4 [10.4, 20.4] | 89.5 [84.5, 94.5] |" in text
    assert "| tiny_strategy / dapo / n 8 | ead | `/` | 6 x 20 | 1.9 [-3.1, 6.9] | 2.9 [-2.1, 7.9] |" in text
    assert "50.0" not in text  # step 8 is in the table, not in the summary
    assert "Where the samples fail" not in text  # a breakdown without failure shares

    # with each failure type's share (the cells' eval_failures.csv): its own table, first step -> last with its CI
    failures = pd.DataFrame([{**setting, "sampler": "ead", "step": step, "group_by": "key", "group": "*",
                              "metric": metric, "value": value, "ci_low": value - 0.05, "ci_high": value + 0.05,
                              "num_problems": 24}
                             for metric, values in (("failure:strategy", (0.80, 0.06)), ("failure:execution",
                                                                                        (0.04, 0.05)))
                             for step, value in zip((0, 16), values)])
    EVAL_BY_GROUP.write(pd.concat([groups, failures]), tmp_path / "groups.csv")
    main(["--profile", "positive_control", "--rerun", "snakemake", *empty, "--signal-by-phase",
          str(tmp_path / "signal.csv"), "--eval-by-group", str(tmp_path / "groups.csv"), "--out", str(out)])
    text = out.read_text()
    assert "| tiny_strategy / dapo / n 8 | ead | `*` | 6 x 24 | 15.4 [10.4, 20.4] | 89.5 [84.5, 94.5] |" in text
    assert ("| setting | sampler | key | execution (%), step 0 -> 16 | strategy (%), step 0 -> 16 |") in text
    assert "| tiny_strategy / dapo / n 8 | ead | `*` | 4.0 -> 5.0 [0.0, 10.0] | 80.0 -> 6.0 [1.0, 11.0] |" in text
    assert text.count("| `/` |") == 1  # only in the Pass@1 table: the failure table has rows of `*` only
    main(["--profile", "positive_control", "--rerun", "snakemake", *empty, "--out", str(out)])
    assert "by phase" not in out.read_text() and "by key" not in out.read_text()


def test_the_probe_by_group_is_rendered_only_when_given(tmp_path):
    from ead.tables import PREMISES_BY_GROUP

    probe = dict(group_by="key", model="results/models/tiny_strategy", num_problems=24, n=16, baseline="tau1.0",
                 seed=0)
    rows = []
    for sampler, step, values in (("tau1.0", 1, (0.160, 0.747)), ("ead", 1, (0.198, 0.823)),
                                  ("ead", 16, (0.170, 0.790))):
        for metric, value, base in zip(("pass@1", "informative@8"), values, (0.160, 0.747)):
            rows.append({**probe, "sampler": sampler, "step": step, "group": "*", "metric": metric, "value": value,
                         "ci_low": value - 0.05, "ci_high": value + 0.04, "diff": value - base,
                         "diff_ci_low": value - base - 0.02, "diff_ci_high": value - base + 0.03})
    PREMISES_BY_GROUP.write(pd.DataFrame(rows), tmp_path / "tiny_strategy_by_key.csv")
    empty = ["--results-meaning", "findings", "--base-eval", "--eval-curves",
             "--entropy", "--entropy-roles", "--forking", "--premises",
             "--premise-metrics", "--claims", "--rl-learns", "--majority"]
    out = tmp_path / "summary.md"
    main(["--profile", "positive_control", "--rerun", "snakemake", *empty, "--premises-by-group",
          str(tmp_path / "tiny_strategy_by_key.csv"), "--out", str(out)])
    text = out.read_text()
    assert "### Probed samplers by key" in text
    assert ("| policy | key | problems | sampler | step | pass@1 (%) | pass@1 - tau1.0 (points) | informative@8 (%) | "
            "informative@8 - tau1.0 (points) |") in text
    # percent with the CI over problems; the paired difference in points; per value, the table's samplers by step
    assert ("| tiny_strategy | `*` | 24 | tau1.0 | 1 | 16.0 [11.0, 20.0] | +0.0 [-2.0, +3.0] | 74.7 [69.7, 78.7] | "
            "+0.0 [-2.0, +3.0] |") in text
    assert ("| tiny_strategy | `*` | 24 | ead | 1 | 19.8 [14.8, 23.8] | +3.8 [+1.8, +6.8] | 82.3 [77.3, 86.3] | "
            "+7.6 [+5.6, +10.6] |") in text
    assert text.index("| ead | 1 |") < text.index("| ead | 16 |")
    main(["--profile", "positive_control", "--rerun", "snakemake", *empty, "--out", str(out)])
    assert "Probed samplers by" not in out.read_text()


def test_the_claims_section_sets_the_pre_registered_prediction_and_the_bound_beside_the_result(tmp_path):
    import pandas as pd

    from ead.summary import claims_section
    from ead.tables import CLAIMS

    row = dict(claim="M1", figure="mechanism_map", statement="s", policy="p", algorithm="dapo", n=8, sampler="ead",
               baseline="tau1.0", metric="pass@1", evaluated_with="eval_tau", step=16, effect=0.001, ci_low=-0.01,
               ci_high=0.012, standard_error=0.005, mde=0.014, num_seeds=4, num_units=384, smallest_effect=0.02,
               verdict="negligible", rule="r", scope="x", over="curve", rl_learns="supported",
               predicted_verdict="supported", predicted_effect=0.03)
    path = tmp_path / "claims.csv"
    CLAIMS.write(pd.DataFrame([row, {**row, "claim": "M2", "predicted_verdict": None, "predicted_effect": None}]),
                 path)
    lines = [line for line in claims_section(str(path)).splitlines() if line.startswith("| M")]
    assert "| 0.02 | 4 | **negligible** | supported (+0.0300) | supported |" in lines[0]
    assert "| 0.02 | 4 | **negligible** |  | supported |" in lines[1]


def test_the_token_role_section_names_the_task_its_tables_hold(tmp_path):
    """Fig. 1's role section is titled by its tables' task (the registry's roles), not by a task the code assumes."""
    roles = pd.DataFrame([dict(model_name="tiny_strategy", task="strategy", role=role, mean_entropy=value,
                               ci_low=value - 0.1, ci_high=value + 0.1, num_tokens=40, num_questions=8)
                          for role, value in (("key", 0.62), ("answer", 0.05))])
    ENTROPY_BY_ROLE.write(declared(roles, ENTROPY_BY_ROLE), tmp_path / "roles.csv")
    section = entropy_roles_section([str(tmp_path / "roles.csv")])
    assert section.startswith("### Entropy by token role (Fig. 1, strategy)")
    assert "| tiny_strategy | key | 0.620 [0.520, 0.720] | 40 | 8 |" in section


def test_the_first_line_says_what_the_profiles_numbers_can_show_and_what_is_bitwise():
    plumbing = render("smoke", "snakemake --cores all --configfile configs/smoke.yaml", meaning="plumbing")
    first = plumbing.split("\n\n")[1]
    assert first.startswith("**A plumbing check, not a result:**") and "`smoke`" in first
    findings = render("default", "snakemake --cores all")
    assert findings.split("\n\n")[1].startswith("**What this run can show:**")
    # the fingerprints show CPU runs bit for bit: no "numbers differ between machines"
    assert "bit for bit" in findings and "compare CIs, not digits" not in findings
    with pytest.raises(ValueError, match="results_meaning must be one of"):
        render("default", "snakemake --cores all", meaning="toy")


def test_each_committed_profile_declares_what_its_numbers_mean():
    meanings = {name: load("config.yaml", *files).get("results_meaning") for name, files in (
        ("default", []), ("smoke", ["smoke.yaml"]), ("verl_cpu", ["verl_cpu.yaml"]), ("gpu_smoke", ["gpu_smoke.yaml"]),
        ("full", ["full.yaml"]), ("paper", ["paper.yaml"]))}
    assert meanings == {"default": "findings", "smoke": "plumbing", "verl_cpu": "plumbing", "gpu_smoke": "plumbing",
                        "full": "findings", "paper": "findings"}
