"""The DAG runtime report (benchmarks/dag_runtime.py) reads Snakemake 9's log: job spans, stage spans, errors."""

import importlib.util
import re
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("dag_runtime", REPO / "benchmarks" / "dag_runtime.py")
dag_runtime = importlib.util.module_from_spec(_spec)
sys.modules["dag_runtime"] = dag_runtime  # dataclasses look their module up there
_spec.loader.exec_module(dag_runtime)

# Two SFT-then-RL jobs, with the lines Snakemake 9.27 writes (input/output lines between rule and jobid).
LOG = """\
Building DAG of jobs...
Execute 2 jobs...
[Mon Nov 23 07:00:00 2026]
localrule tiny_policy_sft:
    input: results/data/countdown.parquet
    output: results/models/tiny1m
    jobid: 7
    reason: Missing output files
    resources: tmpdir=/tmp

[Mon Nov 23 07:00:01 2026]
rule smollm2:
    output: results/models/smollm2-135m-instruct
    jobid: 3

[Mon Nov 23 07:01:01 2026]
Finished jobid: 3 (Rule: smollm2)
1 of 3 steps (33%) done
[Mon Nov 23 07:20:00 2026]
Finished jobid: 7 (Rule: tiny_policy_sft)
[Mon Nov 23 07:20:00 2026]
localrule rl_cell:
    jobid: 12
[Mon Nov 23 07:21:30 2026]
Finished jobid: 12 (Rule: rl_cell)
"""


def test_jobs_and_stage_spans_come_from_the_log_timestamps():
    jobs = dag_runtime.parse_log(LOG)
    assert [(job.rule, job.seconds) for job in jobs] == [("tiny_policy_sft", 1200), ("smollm2", 60), ("rl_cell", 90)]
    rows = {row["stage"]: row for row in dag_runtime.stage_table(jobs)}
    assert list(rows) == ["models", "RL grid"]
    models = rows["models"]
    assert (models["jobs"], models["from_min"], models["to_min"], models["job_min"]) == (2, 0.0, 20.0, 21.0)
    assert models["longest"].rule == "tiny_policy_sft"
    assert (rows["RL grid"]["from_min"], rows["RL grid"]["to_min"]) == (20.0, 21.5)
    assert "**21.5 min**" in dag_runtime.render(jobs, None, "test")
    assert "speed" not in dag_runtime.render(jobs, None, "test")
    assert "before the run: 1.23 s per reference training step" in dag_runtime.render(jobs, None, "test", None, 1.234)


def test_an_unfinished_job_or_an_unplaced_rule_is_an_error():
    with pytest.raises(ValueError, match=r"never finished.*rl_cell \(jobid 12\)"):
        dag_runtime.parse_log(LOG.rsplit("[Mon", 1)[0])
    with pytest.raises(ValueError, match=r"\['new_rule'\] have no stage"):
        dag_runtime.stage_table(dag_runtime.parse_log(LOG.replace("rl_cell", "new_rule")))


def test_every_workflow_rule_has_a_stage():
    declared = re.compile(r"^(?:rule|checkpoint) (\w+):|^use rule \w+ as (\w+)")
    rules = {name for path in [REPO / "Snakefile", *(REPO / "workflow/rules").glob("*.smk")]
             for line in path.read_text().splitlines() if (match := declared.match(line))
             for name in match.groups() if name}
    assert rules <= dag_runtime.STAGE_OF_RULE.keys(), rules - dag_runtime.STAGE_OF_RULE.keys()


def test_the_readme_block_is_replaced_between_its_markers_only():
    begin, end = dag_runtime.MARKERS
    text = f"intro\n{begin}\nold table\n{end}\noutro\n"
    assert dag_runtime.replace_between_markers(text, "new\n", "README") == f"intro\n{begin}\nnew\n{end}\noutro\n"
    with pytest.raises(ValueError, match="exactly one"):
        dag_runtime.replace_between_markers("no markers", "new\n", "README")
