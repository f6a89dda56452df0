"""Shared fixtures: tiny randomly initialised HF models (no hub, no download), killing a run mid-way, float tolerances,
and the helpers that test files of several folders share (configs, constructed tables, the grader, dry runs)."""

import copy
import functools
import importlib.metadata
import importlib.util
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from torch.overrides import TorchFunctionMode

from ead.data.countdown import response_roles
from ead.models.tiny_policy import build_tokenizer
from ead.rewards import Grader
from ead.rl.verl import overrides
from ead.settings import load_layered_config
from ead.settings.rl import expand_grid
from ead.tables import (
    ENTROPY_SAMPLES,
    FORKING_SAMPLES,
    SETTINGS_COLUMNS,
    TRAIN_METRICS,
)
from tests import ledger

# tests/vllm runs inside .venv-vllm (vLLM pins another transformers); from the main environment it is run by
# tests/end_to_end/test_vllm_suite.py in that venv, so it is not collected here.
collect_ignore = [] if importlib.util.find_spec("vllm") else ["vllm"]

WORKFLOW_ROOT = Path(__file__).resolve().parents[1]

# pytest writes nothing outside the checkout, its venvs and temporary directories: the per-user caches and configs
# that the libraries write under the home directory (matplotlib's font cache, Hugging Face's, Snakemake's source
# cache, vLLM's, Ray's) go to a home of the session's own, which every subprocess inherits (the vLLM suite's session
# uses its parent's).
SESSION_HOME = None  # the home this process made (removed when its session ends); None in the vLLM suite's session
if "EAD_TEST_HOME" not in os.environ:
    SESSION_HOME = os.environ["EAD_TEST_HOME"] = os.environ["HOME"] = tempfile.mkdtemp(prefix="ead-tests-home-")
    for variable in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "MPLCONFIGDIR", "HF_HOME"):
        os.environ.pop(variable, None)


#: Test files that start the fast lane (pytest -n 2 --dist worksteal gives each worker a contiguous half of the
#: collection, and an idle worker takes over the tail of the other's): the longest ones (the grader's runaway answers,
#: killed by their CPU limits), so that they overlap the other worker's files instead of running alone at the end.
FIRST_UNDER_XDIST = ("tests/rewards/test_worker.py", "tests/rewards/test_grader.py")


def pytest_configure(config):
    """With ``$EAD_TEST_LEDGER`` set, record where the session's CPU goes (tests/ledger.py)."""
    if folder := os.environ.get(ledger.VARIABLE):
        config.pluginmanager.register(ledger.Ledger(Path(folder)), "ead-test-ledger")


def pytest_collection_modifyitems(config, items):
    """Under pytest-xdist, FIRST_UNDER_XDIST's tests first (a stable sort: every worker collects the same order)."""
    if getattr(config.option, "dist", "no") != "no":
        items.sort(key=lambda item: item.nodeid.split("::")[0] not in FIRST_UNDER_XDIST)


def pytest_collection_finish(session):
    """Start the vLLM suite in the background once collection has selected its wrapper test, so that it runs beside
    the rest of the session instead of after it (tests/end_to_end/test_vllm_suite.py)."""
    from tests.end_to_end.test_vllm_suite import VLLM_SUITE_KEY, start_vllm_suite

    # (not in a pytest-xdist worker: every worker collects, and the suite would start once per worker; there the
    # wrapper test starts it in its own turn)
    if any(item.nodeid.startswith("tests/end_to_end/test_vllm_suite.py::") for item in session.items) \
            and not session.config.option.collectonly and "PYTEST_XDIST_WORKER" not in os.environ:
        suite = start_vllm_suite()
        if suite is not None:
            session.config.stash[VLLM_SUITE_KEY] = suite


def pytest_sessionfinish(session):
    """Stop a background vLLM suite that the session did not wait for, then remove the session's home."""
    from tests.end_to_end.test_vllm_suite import VLLM_SUITE_KEY, stop_vllm_suite

    if (suite := session.config.stash.get(VLLM_SUITE_KEY, None)) is not None:
        stop_vllm_suite(suite)
    if SESSION_HOME is not None:
        shutil.rmtree(SESSION_HOME, ignore_errors=True)


def load_tool(name: str):
    """The maintainer program ``tools/<name>.py`` as a module (tools/ is not a package: each runs as a script), under
    its own name in ``sys.modules``, where dataclasses look their module up."""
    spec = importlib.util.spec_from_file_location(name, WORKFLOW_ROOT / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def copy_workflow(directory: Path) -> Path:
    """A copy of the workflow (Snakefile, environments, workflow/, configs/) in ``directory``, so a test's runs write
    their results/ and .snakemake/ there and never into the checkout."""
    for name in ("Snakefile", "environment.yml", "environment-gpu.yml"):
        shutil.copy(WORKFLOW_ROOT / name, directory / name)
    for folder in ("workflow", "configs"):
        shutil.copytree(WORKFLOW_ROOT / folder, directory / folder)
    return directory


#: The smoke profile as the slow workflow tests run it: registry wheels are shared with the rest of the suite.
SMOKE_ARGS = ("--configfile", "configs/smoke.yaml", "--config", f"cache_dir={WORKFLOW_ROOT / '.cache' / 'wheels'}")


@pytest.fixture(scope="session")
def smoke_run(tmp_path_factory) -> Path:
    """A copy of the workflow in which the smoke profile has run end to end (``snakemake --cores 2`` with
    :data:`SMOKE_ARGS`), once per session. Tests never edit it: they take their own copy (:func:`copy_run`), which
    Snakemake sees as up to date, so an overlay or an edit reruns only the jobs it touches instead of the whole DAG."""
    directory = copy_workflow(tmp_path_factory.mktemp("smoke_run"))
    result = subprocess.run([sys.executable, "-m", "snakemake", "--cores", "2", *SMOKE_ARGS], cwd=directory,
                            capture_output=True, text=True)
    if result.returncode != 0:
        raise AssertionError(f"the smoke profile failed in {directory}:\n{result.stdout}\n{result.stderr}")
    return directory


def copy_run(source: Path, destination: Path) -> Path:
    """A copy of the workflow directory ``source`` with its runs and Snakemake's metadata, file times kept (so that
    nothing in it looks newer than what was built from it)."""
    shutil.copytree(source, destination, symlinks=True, dirs_exist_ok=True)
    return destination


@pytest.fixture
def smoke_run_copy(smoke_run, tmp_path) -> Path:
    """This test's own copy of :func:`smoke_run` (in its ``tmp_path``)."""
    return copy_run(smoke_run, tmp_path / "workflow")


@pytest.fixture(scope="module")
def module_smoke_run_copy(smoke_run, tmp_path_factory) -> Path:
    """One copy of :func:`smoke_run` for a module whose tests build on each other's edits
    (tests/end_to_end/test_workflow.py)."""
    return copy_run(smoke_run, tmp_path_factory.mktemp("workflow"))


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
    # imported here, not at the top: pytest-xdist's controller imports this file too, and builds no model
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    config = LlamaConfig(vocab_size=vocab_size, hidden_size=hidden_size, intermediate_size=2 * hidden_size,
                         num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=heads,
                         max_position_embeddings=256, initializer_range=initializer_range,
                         bos_token_id=1, eos_token_id=2, pad_token_id=0, tie_word_embeddings=False)
    return LlamaForCausalLM(config).eval()


@pytest.fixture(scope="session")
def tiny_llama():
    return make_tiny_llama()


def write_tiny_model(path: Path) -> Path:
    """Save (safetensors) a tiny Llama with a character tokenizer into ``path``, loadable with local_files_only."""
    # the tiny policy's own tokenizer, over an alphabet that also covers free-form test prompts
    tokenizer = build_tokenizer(alphabet="0123456789+-*/=()\\{}[] :.,abcdefghijklmnopqrstuvwxyz\n")
    model = make_tiny_llama(vocab_size=len(tokenizer), hidden_size=32, initializer_range=0.2)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.save_pretrained(path, safe_serialization=True)
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory):
    """A saved (safetensors) tiny Llama with a character tokenizer, loadable with local_files_only."""
    return write_tiny_model(tmp_path_factory.mktemp("tiny_model"))


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


# --- bfloat16: a per-token bound derived from the unit roundoff and the computation (not measured) -------------------
# bfloat16 keeps 8 significant bits, so rounding to nearest moves a value by at most u = 2^-8 of itself.
BFLOAT16_UNIT_ROUNDOFF = torch.finfo(torch.bfloat16).eps / 2
# Chance that one checked token's gap exceeds its bound although both engines are right (a few thousand tokens per
# run: a false failure about once in 10^5 runs), and the Hoeffding multiple it sets: 2 exp(-lambda^2 / 2) = that.
BFLOAT16_TOKEN_FAILURE = 1e-9
BFLOAT16_LAMBDA = float(np.sqrt(2 * np.log(2 / BFLOAT16_TOKEN_FAILURE)))
# torch functions whose results are exact in the inputs' dtype (moves, selections, widening casts, shape changes): a
# bfloat16 pass does not round there.
EXACT_FUNCTIONS = frozenset({
    "to", "float", "double", "type_as", "contiguous", "clone", "detach", "cat", "stack", "expand", "expand_as",
    "repeat", "repeat_interleave", "reshape", "view", "view_as", "transpose", "permute", "unsqueeze", "squeeze",
    "flatten", "unflatten", "split", "chunk", "narrow", "select", "index_select", "gather", "__getitem__",
    "masked_fill", "where", "dropout", "neg", "__neg__"})


class RoundingPoints(TorchFunctionMode):
    """Records the tensors of a forward pass that a bfloat16 pass rounds and that the result depends on: every
    computed tensor that carries a gradient, and every constant operand (a float tensor without gradient, such as
    the rotary cos / sin tables) that bfloat16 cannot hold exactly, which is handed to the op as a leaf with a
    gradient so that its rounding is counted as well."""

    def __init__(self):
        super().__init__()
        self.tensors: list[torch.Tensor] = []

    def _rounded_constant(self, value):
        if (isinstance(value, torch.Tensor) and value.is_floating_point() and not value.requires_grad
                and value.dtype != torch.bfloat16 and torch.isfinite(value).all()
                and not torch.equal(value, value.to(torch.bfloat16).to(value.dtype))):
            leaf = value.detach().requires_grad_(True)
            self.tensors.append(leaf)
            return leaf
        return value

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if torch.is_grad_enabled() and getattr(func, "__name__", "") not in EXACT_FUNCTIONS:
            args = tuple(self._rounded_constant(value) for value in args)
            kwargs = {key: self._rounded_constant(value) for key, value in kwargs.items()}
        result = func(*args, **kwargs)
        if getattr(func, "__name__", "") not in EXACT_FUNCTIONS:
            for tensor in result if isinstance(result, (tuple, list)) else (result,):
                if isinstance(tensor, torch.Tensor) and tensor.requires_grad and tensor.is_floating_point():
                    self.tensors.append(tensor)
        return result


def bfloat16_log_prob_bounds(model, prompt_ids: list[int], response_ids: list[int], tau) -> np.ndarray:
    """Per response token, a bound on |log p_bf16 - log p|, where log p = log softmax(logits / tau_t) of the token
    computed from the float32 ``model``'s weights, and log p_bf16 the same from a bfloat16 forward pass of those
    weights (vLLM's rollout at ``dtype=bfloat16``; verl's FSDP actor under its default bf16 mixed precision).

    Derivation: a bfloat16 pass evaluates the same graph, but every weight and every computed tensor y is stored as
    y (1 + d) with |d| <= u (u = BFLOAT16_UNIT_ROUNDOFF; CPU GEMMs accumulate bf16 products in float32, so a matmul
    rounds at its inputs and its output only). To first order in u, the token's log-prob f moves by sum_i a_i d_i
    with a_i = (df/dy_i) y_i, over every weight and every rounding point y of the model's forward (RoundingPoints;
    df/dy from autograd on the float32 graph; second-order terms are u times smaller). The worst case u sum |a_i|
    assumes every rounding errs the same way and is two orders above what bf16 does (measured on this policy: 0.17
    vs <= 5e-3 at tau 1), so the bound is the probabilistic one of rounding-error analysis (Higham & Mary, SIAM J.
    Sci. Comput. 41(5), 2019): the d_i are independent with mean zero, and Hoeffding's inequality gives
    P(|sum a_i d_i| >= lambda u ||a||_2) <= 2 exp(-lambda^2 / 2), with lambda (BFLOAT16_LAMBDA) set for a failure
    probability of BFLOAT16_TOKEN_FAILURE per checked token. The division by tau and the log-softmax are float32 in
    both engines (vLLM samples from float32 logits; verl's log-probs are float32), outside the bfloat16 part. The
    engines' fused kernels round at a subset of the float32 graph's points (vLLM's fused qkv, silu-and-mul, float32
    attention softmax; autocast keeps verl's embedding and residual stream in float32), so fewer terms, same bound.
    """
    prompt, response = torch.tensor([prompt_ids]), torch.tensor([response_ids])
    sequence = torch.cat([prompt, response], dim=1)
    parameters = [parameter for parameter in model.parameters() if parameter.requires_grad]
    with torch.enable_grad():
        points = RoundingPoints()
        with points:
            logits = model(input_ids=sequence, position_ids=torch.arange(sequence.shape[1])[None]).logits
        logits = logits[0, prompt.shape[1] - 1: sequence.shape[1] - 1].float()
        tau = torch.as_tensor(tau, dtype=logits.dtype).reshape(-1, 1)
        log_probs = torch.log_softmax(logits / tau, dim=-1).gather(-1, response.T).squeeze(-1)
        rounded = [*parameters, *points.tensors]
        # every token's gradient in one batched backward pass (row t of the identity selects token t)
        gradients = torch.autograd.grad(log_probs, rounded, grad_outputs=torch.eye(len(response_ids)),
                                        retain_graph=False, allow_unused=True, is_grads_batched=True)
        squares = sum(((gradient * value.detach()) ** 2).flatten(1).sum(1)
                      for gradient, value in zip(gradients, rounded) if gradient is not None)
        bounds = squares.sqrt().numpy()
    return BFLOAT16_LAMBDA * BFLOAT16_UNIT_ROUNDOFF * bounds


# --- the checkout's configs, read by the settings, verl, SLURM, claims and analyses tests -----------------------------
ROOT = WORKFLOW_ROOT
SCHEMA = ROOT / "workflow" / "schemas" / "config.schema.yaml"
CONFIGS = ROOT / "configs"


@functools.lru_cache(maxsize=None)
def _loaded(*paths: Path) -> dict:
    return load_layered_config(*paths)


def load(*names):
    """Layer config files by the workflow's one rule (ead.settings.load_layered_config); a checkout's profile is
    layered once per session (a copy each call: a test may change its own)."""
    return copy.deepcopy(_loaded(*(ROOT / "configs" / name for name in names)))


#: Every profile's grid with the builder its backend's rule calls (cpu: cell_settings, verl: verl_cell_settings).
PROFILES = {"default": [], "smoke": ["smoke.yaml"], "measured": ["ablations/measured_schedule.yaml"],
            "paper": ["paper.yaml"], "gpu_smoke": ["gpu_smoke.yaml"], "verl_cpu": ["verl_cpu.yaml"]}


def profile_by_name(name: str) -> dict:
    return load("config.yaml", *PROFILES[name])


VERL_CPU = ("config.yaml", "verl_cpu.yaml")
GPU_SMOKE = ("config.yaml", "gpu_smoke.yaml")


profile = load  # the verl profiles' tests' name for it
CONFIG = load("config.yaml")
BEYOND = load("config.yaml", "ablations/beyond_the_paper.yaml")
D_MAX = load("config.yaml", "ablations/d_max_sweep.yaml")


def paper_config():
    """configs/config.yaml with configs/paper.yaml layered on top, as Snakemake does."""
    return load("config.yaml", "paper.yaml")


PAPER = paper_config()
CELLS = expand_grid(PAPER["rl"])
PATHS = overrides.CellPaths(model="/models/m", train_files="/data/train.parquet", val_files="/data/val.parquet",
                            agent_loop_config="/run/agent_loop.yaml", run_dir="/run")


# --- constructed RL tables of one cell, for the claims and figure tests -----------------------------------------------
CELL = dict(policy="p", algorithm="dapo", n=8)
FILLER = {"int": 0, "float": 0.0, "str": "x", "id": "x"}
CLAIM = dict(id="C1", figure="fig04", statement="EAD raises Pass@4", sampler="ead", baseline="tau1.0",
             metric="pass@4", **CELL)
COUNTS = {("ead", 0): [4, 1, 0], ("ead", 1): [6, 2, 1], ("tau1.0", 0): [2, 1, 0], ("tau1.0", 1): [5, 0, 1]}


def problems_table(counts=COUNTS, step=16):
    rows = [dict(**CELL, sampler=sampler, seed=seed, step=s, evaluated_with="eval_tau", problem_id=f"q{i}",
                 num_samples=8, num_correct=c if s == step else 0, greedy_correct=0.0)
            for (sampler, seed), cs in counts.items() for i, c in enumerate(cs) for s in (0, step)]
    table = pd.DataFrame(rows)
    return table.assign(**{c: FILLER[k] for c, k in SETTINGS_COLUMNS.items()})


def steps_table():
    rows = [{**CELL, "sampler": sampler, "seed": seed, "step": step, **{m: 0.0 for m in TRAIN_METRICS},
             "entropy": (0.3 if sampler == "ead" else 0.2) + 0.01 * seed - 0.001 * step}
            for sampler in ("ead", "tau1.0") for seed in (0, 1, 2) for step in range(1, 9)]
    return pd.DataFrame(rows).assign(**{c: FILLER[k] for c, k in SETTINGS_COLUMNS.items()})


# --- the grader under a CPU-time budget (tests/test_rewards.py, tests/rewards/test_worker.py) -------------------------
LIMIT_S = 0.5  # the CPU budget per answer in these tests (each adversarial answer spends it twice: the retry)


@pytest.fixture(scope="module")
def grader():
    grader = Grader(timeout_s=LIMIT_S)
    grader.grade("\\boxed{1}", "1", "math")  # start the worker outside the timed tests
    yield grader
    grader.close()


ADVERSARIAL = {
    "power_tower": "\\boxed{9^{9^{9^{9}}}}",
    "power_tower_plain": "\\boxed{9^9^9^9}",
    "huge_power": "\\boxed{10^{10^{8}}}",
    "huge_factorial": "\\boxed{(10^{10})!}",
    "big_expansion": "\\boxed{(x+y+z)^{200}}",
    "huge_sum": "\\boxed{\\sum_{k=1}^{10^{12}} k^{k}}",
    "deep_braces": "\\boxed{" + "{" * 5000 + "1" + "}" * 5000 + "}",
    "nested_braces_short": "\\boxed{" + "{" * 200 + "1" + "}" * 200 + "}",
    "nested_fractions": "\\boxed{" + "\\frac{1}{" * 40 + "2" + "}" * 40 + "}",
    "megabyte_text": "a" * 1_000_000 + "\\boxed{5}",
    "megabyte_boxed": "\\boxed{" + "1+" * 500_000 + "1}",
    "invalid_latex": "\\boxed{\\frac{1}{\\sqrt{}}}}}\\left(\\begin{matrix}",
    "unicode_junk": "\\boxed{\u202e\u0000\ud800x\U0001F600\u00bd\uffff}",
    "unclosed_box": "\\boxed{1+2" + "{" * 1000,
    "not_a_string": None,
}


# --- Snakemake dry runs in a copy of the workflow (the workflow profiles' and the SLURM profile's tests) --------------
LOCAL_PROFILE = ROOT / "workflow" / "profiles" / "slurm_local"


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return copy_workflow(tmp_path_factory.mktemp("workflow"))


def dry_run(workdir, *args):
    return snakemake_dry_run(workdir, *args)


def planned_resources(output: str) -> list[tuple[str, dict[str, str]]]:
    """(rule, resources) of every job a dry run lists."""
    jobs, rule = [], None
    for line in output.splitlines():
        if match := re.match(r"(?:local)?rule (\w+):$", line):
            rule = match.group(1)
        elif line.strip().startswith("resources:") and rule:
            fields = line.split("resources:", 1)[1].split(", ")
            jobs.append((rule, dict(field.strip().split("=", 1) for field in fields)))
            rule = None
    return jobs


# --- countdown samples of the analyses (the analyses', claims' and figures' tests) ------------------------------------
LOG = logging.getLogger("test")


def role_samples():
    """Entropy samples of two questions: q0 with two finished responses, q1 with one unfinished response and one
    whose token count is broken (a special token inside). Entropies: operand 1, operator 2, everything else 0.1,
    except q1's operator 4."""
    value = {"operand": 1.0, "operator": 2.0}

    def row(prompt_id, sample_id, text, finished, operator=2.0, extra_tokens=0):
        roles = response_roles(text) + ["end"] * finished
        entropies = [operator if r == "operator" else value.get(r, 0.1) for r in roles] + [0.1] * extra_tokens
        return {"prompt_id": prompt_id, "sample_id": sample_id, "text": text, "num_tokens": len(entropies),
                "finished": finished, "mean_entropy": float(np.mean(entropies)),
                "token_ids": list(range(len(entropies))), "entropies": entropies}

    rows = [row("q0", 0, "1+2=3\n\\boxed{3}", True), row("q0", 1, "12*3=36\n\\boxed{36}", True),
            row("q1", 0, "4-1=3\n3", False, operator=4.0), row("q1", 1, "2+2=4", True, extra_tokens=1)]
    return ENTROPY_SAMPLES.validate(pd.DataFrame(rows).assign(model_name="tiny", engine="hf", task="countdown"))


def fork_samples():
    """Forking samples on countdown: 3 references x fork points 0 / 8 x 4 continuations with known correct counts."""
    correct = {("r0", 0): [1, 0, 0, 1], ("r0", 8): [0, 0, 0, 0], ("r1", 0): [1, 1, 1, 1], ("r1", 8): [1, 0, 0, 0],
               ("r2", 0): [0, 0, 0, 0], ("r2", 8): [0, 0, 0, 1]}
    rows = [{"question_id": unit.replace("r", "q"), "unit": unit, "fork_point": p, "sample_id": i, "text": "",
             "num_tokens": 20, "finished": True, "predicted": "5", "correct": float(c), "vote_group": 0}
            for (unit, p), values in correct.items() for i, c in enumerate(values)]
    return FORKING_SAMPLES.validate(pd.DataFrame(rows).assign(model_name="tiny", engine="hf", task="countdown"))
