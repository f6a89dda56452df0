"""EAD vLLM logits processors against a from-scratch HF forward pass, on a tiny random Llama (no hub).

Run (inside the vLLM venv made by workflow/scripts/setup_vllm_venv.sh; ~4 minutes on 2 idle cores)::

    .venv-vllm/bin/python -m pytest tests/vllm -v

What is checked, per runner (V1 model runner, Model Runner V2) and registration (FQCN, entry point, both):
vLLM generates with ``logprobs_mode="processed_logprobs"`` for a batch mixing EAD requests (different
tau_max, tau_min, d, c and lengths, so rows are added, removed and moved) with a plain request. For every
sampled token, vLLM's log-prob must equal ``log_softmax(logits / tau_t)[token]`` with logits from a
transformers forward pass of the same weights on prompt + generated tokens and
``tau_t = annealed_temperature(t, ...)``; tokens with t < c use tau = 1, and the plain request uses tau = 1.
Each engine runs in a fresh subprocess (this file, run as a script) because the runner is chosen from
environment variables at engine start. The processors' bookkeeping is also checked without an engine.

The vLLM-engine tests skip (with the reason) when vLLM is not importable, i.e. in the main venv.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from ead.schedule import (
    AnnealedSchedule,
    EADLinear,
    EADMeanMatched,
    EADMeanTemperature,
    EADTwoStage,
    EntropyAwareTemperature,
    LinearAnneal,
    TwoStageTemperature,
    annealed_temperature,
)

vllm = pytest.importorskip("vllm", reason="vLLM is only installed in .venv-vllm (workflow/scripts/setup_vllm_venv.sh)")

from ead.samplers import vllm_processors  # noqa: E402  (after the importorskip on purpose)

TINY_LLAMA_SHAPE = dict(
    # head_dim 32: vLLM's CPU attention kernels reject head_dim 16.
    vocab_size=320, hidden_size=64, num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1,
    intermediate_size=128, max_position_embeddings=256,
)
# Random init gives near-uniform next-token distributions, on which every temperature yields about the same
# log-prob. Scaling the output head makes the logits spread (std ~4) so a wrong tau is clearly visible.
LM_HEAD_STD = 0.5
FQCN = "ead.samplers.vllm_processors:EADLogitsProcessor"
ENGINE_ENV = {
    "VLLM_CPU_NUM_OF_RESERVED_CPU": "0",
    "OMP_NUM_THREADS": "2",
    "VLLM_CPU_KVCACHE_SPACE": "1",
}

# (EAD extra_args or None, max_tokens). Different lengths make requests finish at different steps, so the
# persistent batch sees removals and condensing moves while EAD rows are still running.
REQUESTS = [
    ({"tau_max": 1.2, "tau_min": 0.1, "d": 25.0, "c": 10}, 32),
    ({"tau_max": 1.5, "tau_min": 0.5, "d": 40.0, "c": 3}, 12),
    (None, 20),
    ({"tau_max": 1.2, "tau_min": 0.8, "d": 500.0, "c": 0}, 40),
    ({"tau_max": 2.0, "tau_min": 0.3, "d": 8.0, "c": 5}, 16),
    (None, 8),
    ({"tau_max": 1.2, "tau_min": 0.1, "d": 25.0, "c": 10}, 28),
]


def schedule_form(schedule, step: int = 0) -> dict:
    """extra_args of the generic form, for any registered schedule (EAD included)."""
    return {"ead_schedule": schedule.to_dict(), "ead_step": step}


# The tiny model's tau = 1 entropy: 5th / 50th / 95th percentiles 0.3 / 1.9 / 3.0 nats over sampled continuations, so a
# gate at 1.9 nats heats about half of the tokens, and EDT with theta = 1 spans its whole [tau_low, tau_high] range.
ENTROPY_GATE = 1.9
# Every other registered schedule in one batch, next to an EAD request of the four-number form and a plain request.
SCHEDULE_REQUESTS = [
    (schedule_form(LinearAnneal(tau_max=1.5, tau_min=0.3, length=12, warmup=2)), 24),
    (schedule_form(TwoStageTemperature(tau_early=1.6, tau_late=0.4, switch=6)), 16),
    ({"tau_max": 1.2, "tau_min": 0.1, "d": 25.0, "c": 3}, 20),
    (schedule_form(EADMeanTemperature(tau_max=1.5, tau_min=0.2, d0=8, length=16), step=3), 12),
    (None, 10),
    (schedule_form(EntropyAwareTemperature(mode="gate", tau_low=0.5, tau_high=1.5, gate=ENTROPY_GATE)), 28),
    (schedule_form(EntropyAwareTemperature(mode="edt", tau_low=0.4, tau_high=1.4, base=0.8, theta=1.0)), 20),
    (schedule_form(AnnealedSchedule(tau_max=1.5, tau_min=0.3, d0=8, warmup=4), step=2), 18),
    # the authors' revised shapes, growing with the step: D = d0 + 2 s = 12 at step 3 (linear: tau_min from t = 12;
    # two-stage: switch at t = 6), mean-matched 2.3 (ln 2.3 - 1) + 1.2 = 0.816 after the warm-up
    (schedule_form(EADLinear(tau_max=1.5, tau_min=0.3, d0=6, step_factor=2, warmup=2), step=3), 22),
    (schedule_form(EADTwoStage(tau_max=1.5, tau_min=0.3, d0=6, step_factor=2, warmup=2), step=3), 14),
    (schedule_form(EADMeanMatched(tau_max=1.5, tau_min=0.2, d0=6, warmup=3), step=5), 10),
]
REQUEST_SETS = {"ead": REQUESTS, "schedules": SCHEDULE_REQUESTS}


# --------------------------------------------------------------------------------------------------------
# Tiny model + tokenizer, built offline
# --------------------------------------------------------------------------------------------------------
def write_tiny_llama(model_dir: Path, seed: int = 0) -> Path:
    """Save a random LlamaForCausalLM (safetensors) and a word-level tokenizer over its vocabulary."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    vocab_size = TINY_LLAMA_SHAPE["vocab_size"]
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2, **{f"w{i}": i for i in range(3, vocab_size)}}
    word_level = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    word_level.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=word_level, unk_token="<unk>", bos_token="<s>", eos_token="</s>"
    )
    tokenizer.save_pretrained(model_dir)

    torch.manual_seed(seed)
    config = LlamaConfig(**TINY_LLAMA_SHAPE, bos_token_id=1, eos_token_id=2, tie_word_embeddings=False)
    model = LlamaForCausalLM(config).to(torch.float32)
    with torch.no_grad():
        model.lm_head.weight.normal_(0.0, LM_HEAD_STD)
    model.save_pretrained(model_dir, safe_serialization=True)
    return model_dir


def prompt_token_ids(num_prompts: int, seed: int = 1) -> list[list[int]]:
    rng = np.random.default_rng(seed)
    lengths = rng.integers(3, 12, size=num_prompts)
    return [rng.integers(3, TINY_LLAMA_SHAPE["vocab_size"], size=n).tolist() for n in lengths]


# --------------------------------------------------------------------------------------------------------
# Engine side: run as a script in a fresh process
# --------------------------------------------------------------------------------------------------------
def generate_with_vllm(model_dir: str, register: str, out_path: str, request_set: str = "ead") -> None:
    """Generate REQUEST_SETS[request_set] with vLLM; write tokens, per-token processed log-probs and the runner."""
    from vllm import LLM, SamplingParams
    from vllm.inputs import TokensPrompt

    # "entrypoint": found via the plugin group only; "both": entry point and FQCN (must not divide twice).
    logits_processors = [FQCN] if register in ("fqcn", "both") else None
    # max_num_seqs < len(REQUESTS): waiting requests enter rows freed by finished ones mid-generation.
    llm = LLM(
        model=model_dir, dtype="float32", enforce_eager=True, max_model_len=128, max_num_seqs=4,
        seed=0, logits_processors=logits_processors, logprobs_mode="processed_logprobs",
    )
    sets = {}
    for name in request_set.split("+"):  # several sets: one batch each, in one engine (one start-up for all)
        requests = REQUEST_SETS[name]
        prompts = prompt_token_ids(len(requests))
        params = [
            SamplingParams(
                temperature=1.0, max_tokens=max_tokens, ignore_eos=True, logprobs=0, seed=100 + i, extra_args=extra
            )
            for i, (extra, max_tokens) in enumerate(requests)
        ]
        outputs = llm.generate([TokensPrompt(prompt_token_ids=p) for p in prompts], params, use_tqdm=False)
        sets[name] = []
        for prompt, output in zip(prompts, outputs):
            completion = output.outputs[0]
            tokens = list(completion.token_ids)
            sets[name].append({
                "prompt": prompt,
                "tokens": tokens,
                "logprobs": [step[token].logprob for step, token in zip(completion.logprobs, tokens)],
            })
    runner = "v2" if llm.llm_engine.vllm_config.use_v2_model_runner else "v1"
    Path(out_path).write_text(json.dumps({"runner": runner, "results": sets[request_set.split("+")[0]],
                                          "sets": sets}))


def run_engine_subprocess(model_dir: Path, runner: str, register: str, tmp_path: Path,
                          request_set: str = "ead") -> dict:
    """Run this file as a generation script under the requested runner; return its JSON (or fail/skip)."""
    out_path = tmp_path / f"vllm_{runner}_{register}_{request_set}.json"
    env = {**os.environ, **ENGINE_ENV, "VLLM_USE_V2_MODEL_RUNNER": "1" if runner == "v2" else "0"}
    if register in ("entrypoint", "both"):
        entry_point_dist = str(write_entry_point_dist(tmp_path))
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [entry_point_dist, env.get("PYTHONPATH")]))
    proc = subprocess.run(
        [sys.executable, __file__, "generate", "--model", str(model_dir), "--register", register,
         "--out", str(out_path), "--requests", request_set],
        env=env, capture_output=True, text=True, timeout=900,
    )
    if proc.returncode != 0:
        lines = (proc.stdout + proc.stderr).splitlines()
        error_lines = [line for line in lines if "error" in line.lower()][-5:]
        return {"error": "\n".join(error_lines + lines[-15:])}
    return json.loads(out_path.read_text())


def write_entry_point_dist(tmp_path: Path) -> Path:
    """A minimal installed distribution declaring the processor under the ``vllm.logits_processors`` group.

    Lets the test exercise entry-point discovery without reinstalling the package; a real install gets the
    same group from pyproject.toml.
    """
    site = tmp_path / "entry_point_site"
    dist_info = site / "ead_vllm_entry_point_probe-0.0.dist-info"
    dist_info.mkdir(parents=True, exist_ok=True)
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: ead-vllm-entry-point-probe\nVersion: 0.0\n")
    (dist_info / "entry_points.txt").write_text(f"[vllm.logits_processors]\nead = {FQCN}\n")
    return site


# --------------------------------------------------------------------------------------------------------
# Reference side: transformers forward pass
# --------------------------------------------------------------------------------------------------------
def reference_logits(model, prompt: list[int], tokens: list[int]) -> torch.Tensor:
    """The tau = 1 logits that predicted each generated token, from one HF forward pass: (tokens, vocab)."""
    ids = torch.tensor([prompt + tokens])
    with torch.no_grad():
        return model(ids).logits[0, len(prompt) - 1 : len(prompt) - 1 + len(tokens)].float()


def reference_log_probs(model, prompt: list[int], tokens: list[int], temperatures: np.ndarray) -> np.ndarray:
    """log_softmax(logits_t / tau_t)[token_t] for each generated token, from one HF forward pass."""
    logits = reference_logits(model, prompt, tokens)
    tau = torch.from_numpy(np.asarray(temperatures, dtype=np.float32)).unsqueeze(1)
    log_probs = torch.log_softmax(logits / tau, dim=-1)
    return log_probs.gather(1, torch.tensor(tokens).unsqueeze(1)).squeeze(1).numpy()


def request_temperatures(extra_args: dict | None, num_tokens: int) -> np.ndarray:
    positions = np.arange(num_tokens)
    if extra_args is None:
        return np.ones(num_tokens)
    return annealed_temperature(positions, extra_args["tau_max"], extra_args["tau_min"], extra_args["d"],
                                extra_args["c"])


@pytest.fixture(scope="module")
def tiny_model_dir(tmp_path_factory) -> Path:
    return write_tiny_llama(tmp_path_factory.mktemp("tiny_llama"))


@pytest.fixture(scope="module")
def hf_model(tiny_model_dir):
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(
        tiny_model_dir, dtype=torch.float32, attn_implementation="eager", local_files_only=True
    ).eval()


# vLLM (its CPU kernels, float32) and transformers are two float32 paths over the same weights: their logits agree
# within LOGIT_ATOL, so a log-prob at logits / tau agrees within 2 * LOGIT_ATOL / tau (measured: ~3e-6 at tau 0.1).
ANNEALING_VISIBLE = 2e-3  # where tau differs clearly from 1, log-probs at tau and at 1 differ by more than this


def log_prob_atol(temperatures) -> np.ndarray:
    # imported here: this file also runs as a script in engine subprocesses, where `tests` is not importable
    from tests.conftest import LOGIT_ATOL, log_prob_tolerance

    return log_prob_tolerance(LOGIT_ATOL, np.asarray(temperatures, dtype=np.float64))


def check_against_reference(generated: dict, hf_model) -> list[str]:
    """Assert every sampled token's log-prob matches the reference; return a per-request summary."""
    summary = []
    for (extra_args, max_tokens), result in zip(REQUESTS, generated["results"]):
        tokens = result["tokens"]
        assert len(tokens) == max_tokens
        temperatures = request_temperatures(extra_args, len(tokens))
        expected = reference_log_probs(hf_model, result["prompt"], tokens, temperatures)
        got = np.asarray(result["logprobs"])
        error = np.abs(got - expected)
        assert (error <= log_prob_atol(temperatures)).all(), (
            f"{extra_args}: max |vLLM - reference| = {error.max():.2e} at t={int(error.argmax())} "
            f"(tau={temperatures[error.argmax()]:.3f})"
        )
        if extra_args is not None:
            warmup = int(extra_args["c"])
            assert np.all(temperatures[:warmup] == 1.0), "tokens at t < c must use tau = 1"
            # The processor must actually act: where tau differs clearly from 1, tau = 1 must NOT match.
            annealed = np.abs(temperatures - 1.0) > 0.05
            if annealed.any():
                at_tau_one = reference_log_probs(hf_model, result["prompt"], tokens, np.ones(len(tokens)))
                assert np.abs(got - at_tau_one)[annealed].max() > ANNEALING_VISIBLE
        summary.append(f"{extra_args}: {len(tokens)} tokens, max error {error.max():.1e}")
    return summary


# --------------------------------------------------------------------------------------------------------
# Engine tests
# --------------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def v1_fqcn_engine(tiny_model_dir, tmp_path_factory) -> dict:
    """One V1-runner engine with the processor registered by name, sampling both request sets (each its own batch):
    the EAD requests and every registered schedule's, so the two tests below share one engine start-up."""
    generated = run_engine_subprocess(tiny_model_dir, "v1", "fqcn", tmp_path_factory.mktemp("v1_fqcn"),
                                      request_set="ead+schedules")
    assert "error" not in generated, generated.get("error")
    assert generated["runner"] == "v1"
    assert [len(generated["sets"][name]) for name in ("ead", "schedules")] == [len(REQUESTS), len(SCHEDULE_REQUESTS)]
    return generated


def test_v1_runner_fqcn_matches_reference(v1_fqcn_engine, hf_model):
    generated = {**v1_fqcn_engine, "results": v1_fqcn_engine["sets"]["ead"]}
    print("\n".join(check_against_reference(generated, hf_model)))


@pytest.mark.parametrize("register", ["entrypoint", "both"])
def test_v1_runner_entry_point_matches_reference(tiny_model_dir, hf_model, tmp_path, register):
    """Registered only through the ``vllm.logits_processors`` entry point, or through it and by FQCN."""
    generated = run_engine_subprocess(tiny_model_dir, "v1", register, tmp_path)
    assert "error" not in generated, generated.get("error")
    assert generated["runner"] == "v1"
    check_against_reference(generated, hf_model)


def test_v2_runner_fqcn_matches_reference(tiny_model_dir, hf_model, tmp_path):
    from vllm.triton_utils import HAS_TRITON

    if not HAS_TRITON:
        # vllm/config/vllm.py (_validate_v2_model_runner) refuses VLLM_USE_V2_MODEL_RUNNER=1 without Triton,
        # and vllm-cpu (0.31.0 here, as 0.32.0) ships Triton without a CPU backend, so HAS_TRITON is False on this
        # machine.
        pytest.skip(
            "Model Runner V2 cannot run here: vLLM raises 'Model Runner V2 requires Triton.' and the vllm-cpu "
            "build has no Triton CPU backend (vllm.triton_utils.HAS_TRITON is False). The V2 class is tested "
            "without the engine in test_v2_apply_on_constructed_batch, "
            "test_v2_schedule_slots_match_the_hf_processor and "
            "test_dual_class_dispatches_on_runner_arguments."
        )
    generated = run_engine_subprocess(tiny_model_dir, "v2", "fqcn", tmp_path)
    assert "error" not in generated, generated.get("error")
    assert generated["runner"] == "v2"
    print("\n".join(check_against_reference(generated, hf_model)))


def scheduled_reference(hf_model, prompt: list[int], tokens: list[int], extra_args) -> tuple[np.ndarray, np.ndarray]:
    """(tau_t, entropy_t) of each generated token as the HF sampler computes them: the request's schedule evaluated
    on HF's own tau = 1 logits (``Schedule.token_temperatures``, what ead.samplers.hf calls), entropy at tau = 1."""
    logits = reference_logits(hf_model, prompt, tokens)
    log_probs = torch.log_softmax(logits, dim=-1)
    entropy = -(log_probs.exp() * log_probs).sum(-1).numpy()
    request = vllm_processors.parse_request(extra_args)
    if not isinstance(request, vllm_processors.ScheduleRequest):
        return request_temperatures(extra_args, len(tokens)), entropy
    temperatures = [float(request.schedule.token_temperatures(log_probs[t : t + 1], t, request.step)[0])
                    for t in range(len(tokens))]
    return np.asarray(temperatures), entropy


# tau of the revised-shape requests above at some positions, by hand: D = 6 + 2 * 3 = 12, c = 2 (mean-matched: c = 3)
REVISED_SHAPE_TAUS = {
    "ead_linear": {0: 1.0, 1: 1.0, 2: 1.5 - 1.2 * 2 / 12, 6: 0.9, 11: 1.5 - 1.2 * 11 / 12, 12: 0.3, 21: 0.3},
    "ead_two_stage": {1: 1.0, 2: 1.5, 5: 1.5, 6: 0.3, 13: 0.3},
    "ead_mean_matched": {2: 1.0, 3: 2.3 * (np.log(2.3) - 1) + 1.2, 9: 2.3 * (np.log(2.3) - 1) + 1.2},
}


def test_v1_runner_samples_every_registered_schedule_as_the_hf_sampler(v1_fqcn_engine, hf_model):
    """One batch of two-stage, linear, EAD-mean, entropy-aware (gate and EDT), EAD in both forms, the authors' revised
    shapes (linear, two-stage, mean-matched growing with d_s) and a plain request:
    each sampled token's vLLM log-prob is log_softmax(logits / tau_t) with tau_t from the same schedule object the
    HF sampler uses, evaluated on the HF forward pass's logits."""
    heated_and_cooled = set()
    for (extra_args, max_tokens), result in zip(SCHEDULE_REQUESTS, v1_fqcn_engine["sets"]["schedules"]):
        tokens = result["tokens"]
        assert len(tokens) == max_tokens
        temperatures, entropy = scheduled_reference(hf_model, result["prompt"], tokens, extra_args)
        expected = reference_log_probs(hf_model, result["prompt"], tokens, temperatures)
        got = np.asarray(result["logprobs"])
        checked = np.ones(len(tokens), dtype=bool)
        schedule = (extra_args or {}).get("ead_schedule", {})
        if schedule.get("mode") == "gate":
            # A token whose entropy sits within float32 noise of the gate may fall on either side in either engine.
            checked = np.abs(entropy - schedule["gate"]) > 1e-4
            heated_and_cooled |= set(np.unique(temperatures[checked]).round(6).tolist())
        if schedule.get("name") in REVISED_SHAPE_TAUS:  # the revised shapes' tau, by hand from the appendix formulas
            for position, tau in REVISED_SHAPE_TAUS[schedule["name"]].items():
                assert temperatures[position] == pytest.approx(tau, abs=1e-12), (schedule["name"], position)
        error = np.abs(got - expected)[checked]
        assert (error <= log_prob_atol(temperatures[checked])).all(), (
            f"{schedule or extra_args}: max |vLLM - reference| = {error.max():.2e}")
        annealed = (np.abs(temperatures - 1.0) > 0.05) & checked
        if annealed.any():  # the processor acts: at tau = 1 these tokens' log-probs would differ
            at_tau_one = reference_log_probs(hf_model, result["prompt"], tokens, np.ones(len(tokens)))
            assert np.abs(got - at_tau_one)[annealed].max() > ANNEALING_VISIBLE, schedule or extra_args
    assert heated_and_cooled == {0.5, 1.5}, "the gate request should see tokens on both sides of the gate"


# --------------------------------------------------------------------------------------------------------
# Engine-free tests of the bookkeeping
# --------------------------------------------------------------------------------------------------------
def sampling_params(extra_args=None, temperature=1.0):
    return vllm.SamplingParams(temperature=temperature, extra_args=extra_args)


EAD_A = {"tau_max": 1.2, "tau_min": 0.1, "d": 25.0, "c": 10}
EAD_B = {"tau_max": 2.0, "tau_min": 0.3, "d": 8.0, "c": 2}


def expected_tau(extra_args, t):
    if extra_args is None:
        return 1.0
    return annealed_temperature(t, *(extra_args[k] for k in ("tau_max", "tau_min", "d", "c")))


def test_v1_batch_update_add_remove_move_swap():
    from vllm.v1.sample.logits_processor import BatchUpdate, MoveDirectionality

    processor = vllm_processors.EADLogitsProcessorV1(
        SimpleNamespace(scheduler_config=SimpleNamespace(max_num_seqs=8)), torch.device("cpu"), False
    )
    outputs = {name: [0] * n for name, n in [("a", 12), ("b", 3), ("plain", 5), ("a2", 0)]}
    spec = {"a": EAD_A, "b": EAD_B, "plain": None, "a2": EAD_A}

    def check(layout):
        logits = torch.ones(len(layout), 4)
        processor.apply(logits)
        want = [1.0 / expected_tau(spec[name], len(outputs[name])) if name else 1.0 for name in layout]
        assert logits[:, 0].tolist() == pytest.approx(want, rel=1e-6), layout

    added = [(i, sampling_params(spec[n]), None, outputs[n]) for i, n in enumerate(["a", "b", "plain"])]
    processor.update_state(BatchUpdate(batch_size=3, removed=[], added=added, moved=[]))
    check(["a", "b", "plain"])
    outputs["a"].append(7)  # one more generated token -> next position
    processor.update_state(None)
    check(["a", "b", "plain"])
    # "a" finishes; "a2" reuses row 0; then rows 1 and 2 swap.
    processor.update_state(BatchUpdate(
        batch_size=3, removed=[0], added=[(0, sampling_params(EAD_A), None, outputs["a2"])],
        moved=[(1, 2, MoveDirectionality.SWAP)],
    ))
    check(["a2", "plain", "b"])
    # row 1 ("plain") finishes and row 2 ("b") is condensed into it.
    processor.update_state(BatchUpdate(
        batch_size=2, removed=[1], added=[], moved=[(2, 1, MoveDirectionality.UNIDIRECTIONAL)]
    ))
    check(["a2", "b"])
    # both EAD rows finish: apply must leave logits untouched.
    processor.update_state(BatchUpdate(batch_size=0, removed=[0, 1], added=[], moved=[]))
    assert processor.temperatures is None


LINEAR = schedule_form(LinearAnneal(tau_max=1.5, tau_min=0.3, length=10))
GATE = schedule_form(EntropyAwareTemperature(mode="gate", tau_low=0.5, tau_high=1.5, gate=1.0))


def expected_row(extra_args, t: int, logits_row: torch.Tensor) -> torch.Tensor:
    """The row as the HF sampler's ScheduleLogitsProcessor leaves it (the reference for the schedule rows)."""
    from ead.samplers.hf import ScheduleLogitsProcessor

    request = vllm_processors.parse_request(extra_args)
    if not isinstance(request, vllm_processors.ScheduleRequest):
        return logits_row / expected_tau(extra_args, t)
    processor = ScheduleLogitsProcessor(request.schedule, prompt_length=1, step=request.step)
    return processor(torch.zeros(1, 1 + t, dtype=torch.long), logits_row[None].clone())[0]


def random_logits(rows: int, seed: int = 0) -> torch.Tensor:
    # Some rows sharp (entropy < 1 nat), some flat (> 1 nat), so the gate sends rows both ways.
    generator = torch.Generator().manual_seed(seed)
    scale = torch.tensor([8.0 if row % 2 else 0.5 for row in range(rows)])[:, None]
    return torch.randn(rows, 32, generator=generator) * scale


def test_v1_schedule_rows_follow_moves_and_match_the_hf_processor():
    from vllm.v1.sample.logits_processor import BatchUpdate, MoveDirectionality

    processor = vllm_processors.EADLogitsProcessorV1(
        SimpleNamespace(scheduler_config=SimpleNamespace(max_num_seqs=8)), torch.device("cpu"), False
    )
    outputs = {"linear": [0] * 4, "gate": [0] * 7, "ead": [0] * 12, "plain": [0] * 2, "gate2": [0] * 3}
    spec = {"linear": LINEAR, "gate": GATE, "ead": EAD_A, "plain": None, "gate2": GATE}

    def check(layout):
        logits = random_logits(len(layout), seed=len(layout))
        want = torch.stack([expected_row(spec[name], len(outputs[name]), logits[row])
                            for row, name in enumerate(layout)])
        got = processor.apply(logits.clone())
        assert torch.allclose(got, want, rtol=1e-6, atol=0), layout

    layout = ["linear", "gate", "ead", "plain"]
    added = [(row, sampling_params(spec[name]), None, outputs[name]) for row, name in enumerate(layout)]
    processor.update_state(BatchUpdate(batch_size=4, removed=[], added=added, moved=[]))
    check(layout)
    outputs["linear"].extend([5] * 9)  # past the end of the linear ramp
    processor.update_state(None)
    check(layout)
    # "gate" finishes and "gate2" takes row 1; rows 0 and 3 swap; then row 2 (EAD) is condensed into row 0's old place.
    processor.update_state(BatchUpdate(
        batch_size=4, removed=[1], added=[(1, sampling_params(GATE), None, outputs["gate2"])],
        moved=[(0, 3, MoveDirectionality.SWAP)],
    ))
    check(["plain", "gate2", "ead", "linear"])
    processor.update_state(BatchUpdate(
        batch_size=3, removed=[0], added=[], moved=[(3, 0, MoveDirectionality.UNIDIRECTIONAL)]
    ))
    check(["linear", "gate2", "ead"])
    processor.update_state(BatchUpdate(batch_size=0, removed=[0, 1, 2], added=[], moved=[]))
    logits = random_logits(2)
    assert torch.equal(processor.apply(logits.clone()), logits)


@pytest.fixture
def cpu_uva_buffers():
    """Host-memory UVA buffers, patched in exactly as vLLM's CPU worker does (vllm/v1/worker/cpu_worker.py)."""
    import vllm.v1.worker.cpu.shm  # noqa: F401  (import side effect: gpu buffer_utils.UvaBuffer -> CPU version)


def v2_processor(prompt_lengths: list[int], vocab_size: int):
    """An EADLogitsProcessorV2 on hand-built runner state: one slot per prompt length."""
    req_states = SimpleNamespace(
        device=torch.device("cpu"), max_num_reqs=len(prompt_lengths), vocab_size=vocab_size,
        prompt_len=SimpleNamespace(gpu=torch.tensor(prompt_lengths, dtype=torch.int32)),
    )
    return vllm_processors.EADLogitsProcessorV2(SimpleNamespace(), req_states)


def v2_context(processor, slots: list[int], outputs_so_far: list[int]):
    """The V2 sampler's LogitsContext for rows at ``slots`` (in that order) that have generated ``outputs_so_far``
    tokens: the predicted token's output index is pos + 1 - prompt_len."""
    from vllm.v1.worker.gpu.sample.logits_processor import LogitsContext

    prompt_len = processor.req_states.prompt_len.gpu
    pos = [prompt_len[s].item() - 1 + n for s, n in zip(slots, outputs_so_far)]
    return LogitsContext(
        expanded_idx_mapping=torch.tensor(slots, dtype=torch.int32), idx_mapping=torch.tensor(slots, dtype=torch.int32),
        idx_mapping_np=np.array(slots, dtype=np.int32), expanded_local_pos=torch.zeros(len(slots), dtype=torch.int32),
        input_ids=torch.zeros(len(slots), dtype=torch.int32), pos=torch.tensor(pos, dtype=torch.int64),
        seq_lens_upper_bound_np=np.array(pos) + 1,
    )


def test_v2_apply_on_constructed_batch(cpu_uva_buffers):
    """Model Runner V2 class on hand-built runner state (slots, positions), as the V2 sampler calls it."""
    processor = v2_processor([5, 3, 7, 4, 2, 9], vocab_size=4)
    slot_spec = {0: EAD_A, 2: None, 3: EAD_B, 5: EAD_A}
    for slot, extra in slot_spec.items():
        assert processor.add_request(slot, sampling_params(extra)) is (extra is not None)
    processor.apply_staged_writes()

    # Rows in a different order than slots.
    slots = [3, 0, 2, 5]
    outputs_so_far = [4, 0, 6, 15]
    ctx = v2_context(processor, slots, outputs_so_far)
    logits = torch.ones(4, 4)
    processor.apply(logits, ctx)
    want = [1.0 / expected_tau(slot_spec[s], n) for s, n in zip(slots, outputs_so_far)]
    assert logits[:, 0].tolist() == pytest.approx(want, rel=1e-6)

    # A recycled slot taken by a plain request must stop annealing.
    processor.add_request(3, sampling_params(None))
    processor.apply_staged_writes()
    logits = torch.ones(4, 4)
    processor.apply(logits, ctx)
    assert logits[0, 0].item() == 1.0


def test_v2_schedule_slots_match_the_hf_processor(cpu_uva_buffers):
    """Model Runner V2 with EAD, linear, gate and plain slots in one batch, rows in another order than slots."""
    processor = v2_processor([5, 3, 7, 4, 2], vocab_size=32)
    slot_spec = {0: LINEAR, 1: EAD_A, 2: None, 3: GATE, 4: GATE}
    for slot, extra in slot_spec.items():
        processor.add_request(slot, sampling_params(extra))
    processor.apply_staged_writes()
    slots = [3, 0, 2, 1, 4]
    outputs_so_far = [4, 6, 1, 12, 0]
    ctx = v2_context(processor, slots, outputs_so_far)
    logits = random_logits(5)
    want = torch.stack([expected_row(slot_spec[s], n, logits[row])
                        for row, (s, n) in enumerate(zip(slots, outputs_so_far))])
    assert torch.allclose(processor.apply(logits.clone(), ctx), want, rtol=1e-6, atol=0)
    # A recycled slot taken by a plain request is left alone.
    processor.add_request(0, sampling_params(None))
    processor.apply_staged_writes()
    assert torch.equal(processor.apply(logits.clone(), ctx)[1], logits[1])


def test_dual_class_dispatches_on_runner_arguments(cpu_uva_buffers):
    cls = vllm_processors.EADLogitsProcessor
    from vllm.v1.sample.logits_processor import LogitsProcessor as V1Interface
    from vllm.v1.worker.gpu.sample.logits_processor import LogitsProcessor as V2Interface

    assert issubclass(cls, V1Interface) and issubclass(cls, V2Interface)
    v1 = cls(SimpleNamespace(scheduler_config=SimpleNamespace(max_num_seqs=4)), torch.device("cpu"), False)
    assert v1.runner == "v1"
    req_states = SimpleNamespace(device=torch.device("cpu"), max_num_reqs=4, vocab_size=4, prompt_len=None)
    assert cls(SimpleNamespace(), req_states).runner == "v2"


def test_second_ead_processor_of_one_engine_is_inactive():
    """Entry point + logits_processors=[FQCN] loads EAD twice: logits must still be divided only once."""
    from vllm.v1.sample.logits_processor import BatchUpdate

    config = SimpleNamespace(scheduler_config=SimpleNamespace(max_num_seqs=2))
    first = vllm_processors.EADLogitsProcessor(config, torch.device("cpu"), False)
    second = vllm_processors.EADLogitsProcessorV1(config, torch.device("cpu"), False)
    added = [(0, sampling_params(EAD_B), None, [0] * 6)]
    logits = torch.ones(1, 4)
    for processor in (first, second):
        processor.update_state(BatchUpdate(batch_size=1, removed=[], added=added, moved=[]))
        logits = processor.apply(logits)
    assert logits[0, 0].item() == pytest.approx(1.0 / expected_tau(EAD_B, 6), rel=1e-6)


def test_per_row_loop_baseline_matches_vectorised():
    """The benchmark baseline (benchmarks/vllm_per_row_processor.py) divides the logits as the vectorised processor."""
    from vllm.v1.sample.logits_processor import BatchUpdate

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))  # as bench_vllm_processors.py runs
    import vllm_per_row_processor

    config = SimpleNamespace(scheduler_config=SimpleNamespace(max_num_seqs=4))
    vectorised = vllm_processors.EADLogitsProcessorV1(config, torch.device("cpu"), False)
    per_row = vllm_per_row_processor.PerRowLoopEADLogitsProcessor(config, torch.device("cpu"), False)
    outputs = [[0] * 11, [0] * 3, [0] * 30]
    row_specs = [EAD_A, None, EAD_B]
    added = [(i, sampling_params(extra), None, out) for i, (extra, out) in enumerate(zip(row_specs, outputs))]
    vectorised.update_state(BatchUpdate(batch_size=3, removed=[], added=added, moved=[]))
    # The baseline reads its parameters from its own extra_args key (so both can share one engine).
    key = vllm_per_row_processor.PER_ROW_LOOP_EXTRA_ARGS_KEY
    added = [
        (i, sampling_params(None if extra is None else {key: extra}), None, out)
        for i, (extra, out) in enumerate(zip(row_specs, outputs))
    ]
    per_row.update_state(BatchUpdate(batch_size=3, removed=[], added=added, moved=[]))
    logits = torch.randn(3, 16)
    assert torch.allclose(vectorised.apply(logits.clone()), per_row.apply(logits.clone()), rtol=1e-6)


@pytest.mark.parametrize("schedule", [AnnealedSchedule(tau_max=1.5, tau_min=0.3, d0=8, warmup=4),
                                      LinearAnneal(tau_max=1.6, tau_min=0.4, length=10, warmup=3)],
                         ids=lambda schedule: schedule.name)
def test_sampling_cli_with_vllm_engine_returns_exact_behaviour_logprobs(tiny_model_dir, hf_model, tmp_path, schedule):
    """`python -m ead.samplers.sample --engine vllm`: the table's per-token log-probs are the schedule's (EAD through
    its four numbers, another schedule through the generic form)."""
    import pandas as pd

    prompts = tmp_path / "prompts.csv"
    pd.DataFrame({"id": ["p0", "p1"], "prompt": ["w5 w9 w40 w7", "w100 w3"]}).to_csv(prompts, index=False)
    out = tmp_path / "samples.parquet"
    command = [sys.executable, "-m", "ead.samplers.sample", "--engine", "vllm", "--model", str(tiny_model_dir),
               "--prompts", str(prompts), "--schedule", json.dumps(schedule.to_dict()), "--step", "2", "--n", "3",
               "--max-new-tokens", "24", "--seed", "5", "--out", str(out)]
    env = {**os.environ, **ENGINE_ENV, "VLLM_USE_V2_MODEL_RUNNER": "0"}
    proc = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-5000:]
    table = pd.read_parquet(out)
    assert len(table) == 6 and set(table.engine) == {"vllm"} and set(table.step) == {2}
    prompt_ids = {"p0": [5, 9, 40, 7], "p1": [100, 3]}
    for row in table.itertuples():
        tokens = list(row.token_ids)
        temperatures = schedule.temperatures(np.arange(len(tokens)), step=2)
        expected = reference_log_probs(hf_model, prompt_ids[row.prompt_id], tokens, temperatures)
        atol = log_prob_atol(temperatures)
        assert (np.abs(np.asarray(row.behaviour_logprobs) - expected) <= atol).all()
        assert row.sum_behaviour_logprob == pytest.approx(float(expected.sum()), abs=float(atol.sum()))


@pytest.mark.parametrize(
    "extra_args, message",
    [
        ({"tau_max": 1.2, "tau_min": 0.1, "d": 25.0}, "missing"),
        ({"tau_max": 1.2, "tau_min": 0.0, "d": 25.0, "c": 10}, "tau_min"),
        ({"tau_max": 0.5, "tau_min": 0.6, "d": 25.0, "c": 10}, "tau_min <= tau_max"),
        ({"tau_max": 1.2, "tau_min": 0.1, "d": 0.0, "c": 10}, "d > 0"),
        ({"ead_step": 3}, "'ead_step' is given without 'ead_schedule'"),
        ({**LINEAR, "tau_max": 1.2}, r"'ead_schedule' and the EAD keys \['tau_max'\] are both given"),
        ({"ead_schedule": {"name": "cosine"}, "ead_step": 0}, r"Unsupported schedule 'cosine'"),
        ({"ead_schedule": {"name": "linear", "tau_max": 1.2, "tau_min": 0.1, "length": 0}}, "length must be >= 1"),
        ({**GATE, "ead_step": -1}, "'ead_step' must be an integer >= 0"),
    ],
)
def test_invalid_extra_args_fail_the_request(extra_args, message):
    with pytest.raises(ValueError, match=message):
        vllm_processors.EADLogitsProcessor.validate_params(sampling_params(extra_args))


def test_ead_request_with_temperature_other_than_one_is_refused():
    with pytest.raises(ValueError, match="temperature=1.0"):
        vllm_processors.EADLogitsProcessor.validate_params(sampling_params(EAD_A, temperature=0.7))
    with pytest.raises(ValueError, match="temperature=1.0"):
        vllm_processors.EADLogitsProcessor.validate_params(sampling_params(GATE, temperature=0.7))
    vllm_processors.EADLogitsProcessor.validate_params(sampling_params(None, temperature=0.7))  # not EAD: fine


@pytest.mark.parametrize("truncation", [{"top_p": 0.9}, {"top_k": 50}, {"min_p": 0.05}])
def test_an_ead_request_that_truncates_the_distribution_is_refused(truncation):
    """A truncated distribution is not the schedule's, whose log-probs TIS divides by; off values pass."""
    from vllm import SamplingParams

    (name, value), = truncation.items()
    for extra_args in (EAD_A, GATE):
        with pytest.raises(ValueError, match=rf"must not truncate the distribution \({name}={value}\).*top_p=1.0"):
            vllm_processors.EADLogitsProcessor.validate_params(SamplingParams(extra_args=extra_args, **truncation))
    vllm_processors.EADLogitsProcessor.validate_params(SamplingParams(**truncation))  # not EAD: vLLM's own sampling
    vllm_processors.EADLogitsProcessor.validate_params(SamplingParams(extra_args=EAD_A, top_k=-1, top_p=1.0))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Engine side of the test (run by the tests in a subprocess).")
    parser.add_argument("command", choices=["generate"])
    parser.add_argument("--model", required=True)
    parser.add_argument("--register", choices=["fqcn", "entrypoint", "both"], required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--requests", default="ead", help=f"one of {sorted(REQUEST_SETS)}, or several joined by +")
    args = parser.parse_args()
    generate_with_vllm(args.model, args.register, args.out, args.requests)
