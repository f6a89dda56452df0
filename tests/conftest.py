"""Shared fixtures: tiny randomly initialised HF models (no hub, no download), and killing a run mid-way."""

import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
import torch
from transformers import LlamaConfig, LlamaForCausalLM

from ead.models.tiny_policy import build_tokenizer

# tests/vllm runs inside .venv-vllm (vLLM pins another transformers); from the main environment it is run by
# tests/test_vllm_suite.py in that venv, so it is not collected here.
collect_ignore = [] if importlib.util.find_spec("vllm") else ["vllm"]

WORKFLOW_ROOT = Path(__file__).resolve().parents[1]


def copy_workflow(directory: Path) -> Path:
    """A copy of the workflow (Snakefile, environments, workflow/, configs/) in ``directory``, so a test's runs write
    their results/ and .snakemake/ there and never into the checkout."""
    for name in ("Snakefile", "environment.yml", "environment-gpu.yml"):
        shutil.copy(WORKFLOW_ROOT / name, directory / name)
    for folder in ("workflow", "configs"):
        shutil.copytree(WORKFLOW_ROOT / folder, directory / folder)
    return directory


def snakemake_dry_run(workdir: Path, *args: str, timeout_s: int = 300, with_stderr: bool = False) -> str:
    """The output of ``snakemake --dry-run *args`` in ``workdir`` with this checkout's src/ first on the path (stdout,
    and stderr after it if ``with_stderr``); fails the test with Snakemake's output when it exits non-zero, and kills
    it after ``timeout_s``."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(WORKFLOW_ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run(["timeout", "-k", "10", str(timeout_s), sys.executable, "-m", "snakemake", "--dry-run",
                             *args], cwd=workdir, capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout + result.stderr if with_stderr else result.stdout


def make_tiny_llama(vocab_size=32, hidden_size=32, layers=2, heads=4, seed=0, initializer_range=0.5):
    """A float32 Llama small enough for exhaustive tests; a large init range makes distributions peaked."""
    torch.manual_seed(seed)
    config = LlamaConfig(vocab_size=vocab_size, hidden_size=hidden_size, intermediate_size=2 * hidden_size,
                         num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=heads,
                         max_position_embeddings=256, initializer_range=initializer_range,
                         bos_token_id=1, eos_token_id=2, pad_token_id=0, tie_word_embeddings=False)
    return LlamaForCausalLM(config).eval()


@pytest.fixture(scope="session")
def tiny_llama():
    return make_tiny_llama()


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory):
    """A saved (safetensors) tiny Llama with a character tokenizer, loadable with local_files_only."""
    path = tmp_path_factory.mktemp("tiny_model")
    # the tiny policy's own tokenizer, over an alphabet that also covers free-form test prompts
    tokenizer = build_tokenizer(alphabet="0123456789+-*/=()\\{}[] :.,abcdefghijklmnopqrstuvwxyz\n")
    model = make_tiny_llama(vocab_size=len(tokenizer), hidden_size=32, initializer_range=0.2)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.save_pretrained(path, safe_serialization=True)
    tokenizer.save_pretrained(path)
    return path


def kill_after_first_checkpoint(command, checkpoint_state, timeout_s=180):
    """Start ``command`` and SIGKILL it as soon as ``checkpoint_state`` (its first checkpoint) exists."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + timeout_s
    while not checkpoint_state.exists():
        assert process.poll() is None, "the run ended before its first checkpoint; nothing was interrupted"
        assert time.time() < deadline
        time.sleep(0.02)
    process.send_signal(signal.SIGKILL)
    process.wait()


@pytest.fixture
def killed_after_first_checkpoint():
    """The function :func:`kill_after_first_checkpoint` (for the resume tests of SFT and RL training)."""
    return kill_after_first_checkpoint


# --- float tolerances derived from what a check compares ------------------------------------------------------------
# Two float32 forward passes of one model (KV-cached step by step vs one pass, another padding or batch grouping,
# another CPU kernel set or thread count) round the same logits apart. Measured on the test models across
# ATEN_CPU_CAPABILITY=default/avx2 and 1-2 threads (OMP_NUM_THREADS): up to 4e-5, a few dozen ulps of the largest logit.
# A wrong KV cache, position id or attention mask moves logits by more than 1e-1, so this bound still catches bugs.
LOGIT_ATOL = 2e-4
# Rounding of log-softmax / entropy themselves, on the same float32 logits (a few ulps of values of order 1-10).
FLOAT32_ROUNDING = 4e-6


@contextmanager
def recorded_logits(model):
    """Collect the float32 output of ``model.lm_head`` for every forward call made inside the block."""
    calls = []
    handle = model.lm_head.register_forward_hook(lambda module, args, output: calls.append(output.detach().float()))
    try:
        yield calls
    finally:
        handle.remove()


def sampled_logits(calls: list, response_mask: torch.Tensor) -> torch.Tensor:
    """(batch, T, vocab) logits each response token was drawn from, from the lm_head calls of one ``sample`` run
    (the first call, over every row's last prompt token, predicts token 0; then one call per generated token).

    The sampler drops finished rows from its forward passes in bulk, keeping the others in order: when a call has
    fewer rows than the one before, the rows it dropped are exactly those that had finished (``response_mask`` False
    from the position it predicts on). Positions a row did not compute are NaN (none of them is a response token)."""
    batch, length = response_mask.shape
    first = calls[0][:, -1]
    assert first.shape[0] == batch and len(calls) >= length
    logits = torch.full((batch, length, first.shape[-1]), float("nan"))
    logits[:, 0] = first
    computed = torch.arange(batch)
    for t, call in enumerate(calls[1:length], start=1):
        if call.shape[0] < len(computed):
            computed = computed[response_mask[computed, t]]
        assert call.shape[0] == len(computed), f"position {t}: {call.shape[0]} rows computed, {len(computed)} expected"
        logits[computed, t] = call[:, -1]
    assert not logits[response_mask].isnan().any()
    return logits


def log_prob_tolerance(logit_gap: torch.Tensor, tau) -> torch.Tensor:
    """Bound on |log softmax(z / tau)_i - log softmax(z' / tau)_i| given the gap max_j |z_j - z'_j| of two logit
    vectors: log-softmax is 2-Lipschitz in the max norm, so 2 * gap / tau, plus the rounding of the log-softmax."""
    return 2 * logit_gap / tau + FLOAT32_ROUNDING


def entropy_tolerance(entropy: torch.Tensor, logit_gap) -> torch.Tensor:
    """Bound on the change of the entropy H of softmax(z) when z moves by at most ``logit_gap`` per entry:
    dH/dz_j = -p_j (log p_j + H), so |dH| <= gap * sum_j p_j |log p_j + H| <= gap * 2H (to first order; twice that
    covers the second order at these gaps), plus rounding."""
    return 4 * logit_gap * abs(entropy) + FLOAT32_ROUNDING


def float32_sum_tolerance(values) -> float:
    """Worst-case rounding of a float32 sum of ``values`` in any order (recursive summation: n * eps * sum |x|);
    torch and numpy, or two CPU kernel sets, add in different orders."""
    values = torch.as_tensor(values, dtype=torch.float64)
    return float(len(values) * torch.finfo(torch.float32).eps * values.abs().sum())
