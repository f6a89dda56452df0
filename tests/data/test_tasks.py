"""The task registry (ead.data.tasks): what each built-in task declares, the config's schema naming exactly the
registry's synthetic tasks and their settings, a task's declaration refused when it is incomplete, and a toy task
added at run time going through every part that asks the registry (data job, grader, premise probe, SFT references,
token roles, one RL cell) without any of them naming it."""

from __future__ import annotations

import dataclasses
import inspect
import json
import random

import pandas as pd
import pytest
import yaml

from ead.data.splits import draw_table
from ead.data.tasks import (
    Task,
    get_task,
    register_task,
    synthetic_tasks,
    table_task,
    task_names,
    tasks,
    unregister_task,
)
from tests.conftest import CONFIG, SCHEMA


def test_the_built_in_tasks_declare_how_they_grade_and_what_the_pipeline_may_ask_of_them():
    assert {name: task.grading for name, task in tasks().items()} == {
        "math": "math", "math500": "math", "gsm8k": "math", "mmlu": "choice", "arc_easy": "choice",
        "arc_challenge": "choice", "countdown": "verifier", "arithmetic": "math", "strategy": "verifier"}
    assert synthetic_tasks() == ("countdown", "arithmetic", "strategy")
    assert [name for name, task in tasks().items() if task.probed] == ["countdown", "strategy"]
    assert [name for name, task in tasks().items() if task.answers_unique] == [
        "math", "math500", "gsm8k", "mmlu", "arc_easy", "arc_challenge", "arithmetic"]
    assert list(get_task("countdown").sft_references) == ["canonical", "largest_first"]
    assert get_task("strategy").teacher_responses is not None and get_task("countdown").fork_sharpen
    with pytest.raises(ValueError, match=r"Unknown task 'chess'; known tasks: \['arc_challenge', 'arc_easy'"):
        get_task("chess")


def test_the_schema_names_exactly_the_registrys_synthetic_tasks_and_each_ones_settings():
    schema = yaml.safe_load(SCHEMA.read_text())["properties"]
    assert schema["policies"]["additionalProperties"]["properties"]["task"]["enum"] == list(synthetic_tasks())
    assert schema["rl"]["properties"]["task"]["enum"] == [*synthetic_tasks(), "math"]
    data = schema["data"]["properties"]
    for name in synthetic_tasks():
        assert set(data[name]["properties"]) == set(get_task(name).settings), name
        # every setting has a default in the generator (the data job types its flag by it)
        assert set(get_task(name).settings) <= set(inspect.signature(get_task(name).generate).parameters)
    for name in set(CONFIG["data"]) - {"real"}:  # and the config sets every one
        assert set(CONFIG["data"][name]) == set(get_task(name).settings), name


@pytest.mark.parametrize(("changes", "message"), [
    ({"grading": "exact"}, r"grading 'exact' is not one of \['math', 'choice', 'verifier'\]"),
    ({"verify": None}, "a verify function goes with grading 'verifier' and only with it"),
    ({"settings": ()}, "a generator goes with the data.<task> settings it takes"),
    ({"failure_types": ("format",)}, r"failure_types \['format'\] lack 'strategy'"),
    ({"classify_failure": None}, "classify_failure goes with its failure_types"),
    ({"roles": ()}, "response_roles goes with its roles"),
    ({"sft_references": {"random": str}}, "sft reference 'random' is the table's own solution"),
    ({"name": "echo task"}, "task name 'echo task' must be an identifier"),
])
def test_an_incomplete_task_is_refused_naming_what_is_missing(changes, message):
    with pytest.raises(ValueError, match=message):
        dataclasses.replace(ECHO, **changes)


# --- a toy task, added at run time -----------------------------------------------------------------------------------
# "echo": the prompt is a few digits, the answer is the last one boxed. Its strategy mistake: boxing another digit
# of the prompt (a wrong choice at the fork); anything else is a format mistake.

def echo_verify(response: str, reference: str) -> tuple[bool, str | None]:
    answer = response.strip().removeprefix("\\boxed{").removesuffix("}") if response.strip().startswith("\\boxed{") \
        else None
    return answer == reference.split()[-1], answer


def echo_failure(response: str, reference: str) -> str:
    valid, answer = echo_verify(response, reference)
    return "ok" if valid else "strategy" if answer in reference.split() else "format"


def echo_roles(response: str) -> list[str]:
    return ["answer" if character.isdigit() else "syntax" for character in response]


def generate_echo(seed: int = 0, n_train: int = 40, n_val: int = 4, n_test: int = 4) -> pd.DataFrame:
    def draw(rng: random.Random):
        digits = " ".join(rng.choice("0123456789") for _ in range(4))
        return digits, {"question": digits + "\n", "answer": digits, "solution": f"\\boxed{{{digits[-1]}}}"}

    return draw_table("echo", seed, {"train": n_train, "val": n_val, "test": n_test}, draw)


ECHO = Task("echo", "verifier", verify=echo_verify, generate=generate_echo,
            settings=("seed", "n_train", "n_val", "n_test"), failure_types=("strategy", "format"),
            classify_failure=echo_failure, roles=("answer", "syntax"), response_roles=echo_roles,
            sft_references={"first_digit": lambda row: f"\\boxed{{{row['answer'][0]}}}"})


@pytest.fixture
def echo():
    register_task(ECHO)
    yield ECHO
    unregister_task("echo")


def test_the_registrys_entry_points_refuse_a_wrong_type_naming_the_parameter():
    with pytest.raises(TypeError, match="register_task: task must be an ead.data.tasks.Task, got str"):
        register_task("echo")
    with pytest.raises(TypeError, match="task_names: having must be a function of a Task"):
        task_names("synthetic")
    with pytest.raises(TypeError, match="table_task: table must be a DataFrame"):
        table_task(["countdown"], "t.parquet", "SFT", lambda task: task.synthetic)
    with pytest.raises(ValueError, match="unregister_task: 'countdown' is a built-in task"):
        unregister_task("countdown")
    assert task_names(lambda task: task.synthetic) == synthetic_tasks()


def test_a_task_registered_at_run_time_is_asked_by_the_data_job_grader_probe_sft_and_token_roles(echo, tmp_path):
    from ead.analyses.entropy_by_position import token_role_names, token_roles
    from ead.analyses.premises import table_task
    from ead.data.build import main as build_main
    from ead.io import read_table
    from ead.models.sft import training_solutions
    from ead.rewards import Grader

    assert "echo" in task_names() and "echo" in synthetic_tasks()
    with pytest.raises(ValueError, match="a task named 'echo' is already registered"):
        register_task(ECHO)
    with pytest.raises(ValueError, match="'countdown' is a built-in task"):
        unregister_task("countdown")
    # the data job: its flags are the task's settings
    build_main(["--dataset", "echo", "--out", str(tmp_path / "echo.parquet"), "--seed", "0", "--n-train", "12",
                "--n-val", "2", "--n-test", "2"])
    table = read_table(tmp_path / "echo.parquet")
    assert set(table["source"]) == {"echo"} and table.groupby("split").size().to_dict() == {
        "test": 2, "train": 12, "val": 2}
    reference = table["answer"].iloc[0]
    last, other = reference.split()[-1], next(d for d in "0123456789" if d not in reference.split())
    # the grader: the task's own verifier
    grader = Grader()
    try:
        assert grader.grade(f"\\boxed{{{last}}}", reference, "echo").score == 1.0
        assert grader.grade(f"\\boxed{{{other}}}", reference, "echo").status == "wrong"
        assert grader.grade("no box", reference, "echo").status == "no_answer"
    finally:
        grader.close()
    # the premise probe: the table's task, its failures by first mistake
    assert table_task(table, "echo.parquet") == "echo"
    assert [echo.classify_failure(response, "1 2 3") for response in ("\\boxed{1}", "\\boxed{5}", "\\boxed{3}")] == [
        "strategy", "format", "ok"]
    # the SFT: the table's own solutions, or a reference the task offers; a teacher it has not is refused
    train = table[table["split"] == "train"]
    assert training_solutions(train, "random", "echo.parquet") == list(train["solution"])
    assert training_solutions(train, "first_digit", "echo.parquet") == [f"\\boxed{{{a[0]}}}" for a in train["answer"]]
    with pytest.raises(SystemExit, match="a teacher bias needs a task with a biased teacher"):
        training_solutions(train, "random", "echo.parquet", 0.9, 0)
    # token roles (Fig. 1 by role)
    assert token_role_names("echo") == ("answer", "syntax", "end")
    assert token_roles("\\boxed{7}", 10, True, "echo") == ["syntax"] * 7 + ["answer", "syntax", "end"]


def test_a_run_time_task_trains_one_rl_cell(echo, tmp_path):
    """One CPU RL cell of two steps on the toy task: rollouts graded by its verifier, evaluation by the same."""
    from ead.io import write_table
    from ead.models import save_hf_model
    from ead.models.tiny_policy import TinyPolicyShape, build_model, build_tokenizer
    from ead.rl.train import main as train_main
    from ead.settings.rl import Cell, cell_settings
    from ead.tables import EVAL_FAILURES, EVAL_PROBLEMS, STEPS

    table = generate_echo(seed=1, n_train=24, n_val=4, n_test=4)
    write_table(table, tmp_path / "echo.parquet")
    tokenizer = build_tokenizer()
    save_hf_model(tmp_path / "policy", build_model(tokenizer, TinyPolicyShape(
        hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64), seed=0), tokenizer)
    val = table[table["split"] == "val"]
    write_table(pd.DataFrame({"problem_id": val["id"], "num_samples": 2, "num_correct": 0, "greedy_correct": 0.0,
                              "num_timeouts": 0}), tmp_path / "base.csv")
    # step 0 by first mistake: both samples of each problem a format mistake (the base counts: none correct)
    write_table(pd.DataFrame({"problem_id": list(val["id"]) * 3, "failure": ["ok"] * 4 + ["strategy"] * 4
                              + ["format"] * 4, "num_samples": [0] * 8 + [2] * 4}), tmp_path / "base_failures.csv")
    config = json.loads(json.dumps(CONFIG))
    config["rl"].update(steps=2, prompts_per_step=2, max_new_tokens=8)
    config["rl"]["eval"].update(limit=4, n=2, every=2, batch_size=8)
    settings = dataclasses.replace(cell_settings(config, Cell("tiny", "dapo", "ead", 4, 0)), task="echo")
    train_main(["--policy-dir", str(tmp_path / "policy"), "--data", str(tmp_path / "echo.parquet"),
                "--base-eval", str(tmp_path / "base.csv"), "--base-failures", str(tmp_path / "base_failures.csv"),
                "--settings", settings.to_json(), "--threads", "1",
                "--out-dir", str(tmp_path / "out"), "--checkpoint-dir", str(tmp_path / "ckpt")])
    assert list(STEPS.read(tmp_path / "out" / "steps.csv")["step"]) == [1, 2]
    problems = EVAL_PROBLEMS.read(tmp_path / "out" / "eval_problems.csv")
    assert set(problems["problem_id"]) == set(val["id"]) and (problems["num_samples"] == 2).all()
    # its samples by the task's own classifier: every type of every problem at steps 0 and 2, summing to its samples
    failures = EVAL_FAILURES.read(tmp_path / "out" / "eval_failures.csv")
    assert set(failures["failure"]) == {"ok", "strategy", "format"}
    totals = failures.groupby(["step", "evaluated_with", "problem_id"])["num_samples"].sum()
    assert (totals == 2).all() and sorted(totals.index.get_level_values("step").unique()) == [0, 2]


def test_a_caller_while_the_registry_is_built_waits_for_all_of_it(monkeypatch):
    """verl's reward worker grades from several threads at once: one that asked while another was still importing the
    synthetic task modules got the benchmarks alone and refused 'arithmetic'. Made deterministic: the imports are
    slowed, and a second thread asks while the first builds."""
    import importlib
    import threading
    import time

    from ead.data import tasks as registry

    monkeypatch.setattr(registry, "_REGISTRY", {})
    monkeypatch.setattr(registry, "_BUILT_IN", set())

    real_import = importlib.import_module

    def slow_import(name):
        time.sleep(0.05)
        return real_import(name)

    monkeypatch.setattr(registry.importlib, "import_module", slow_import)
    seen = {}
    builder = threading.Thread(target=lambda: seen.setdefault("builder", set(registry.tasks())))
    builder.start()
    time.sleep(0.02)  # the builder holds the benchmarks and is importing the first synthetic module
    seen["second"] = set(registry.tasks())
    builder.join()
    assert "arithmetic" in seen["second"] and seen["second"] == seen["builder"]
