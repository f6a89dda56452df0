"""The three sampling analyses on the vLLM engine (the paper profile's path), end to end on a tiny random Llama.

Each job runs as the workflow runs it (``python -m ead.analyses.<job> --engine vllm``, one vLLM engine per process)
on a small questions table. Checked: entropy-by-position's per-token entropies (vLLM samples, then the HF model
rescores them) equal full-vocabulary entropies computed here from an independent forward pass; forking continues
each reference prefix at the token level within the shared budget; Maj@N covers every sampler and N.

Run inside .venv-vllm: ``.venv-vllm/bin/python -m pytest tests/vllm/test_vllm_analyses.py`` (~2 min on 2 cores).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

pytest.importorskip("vllm", reason="vLLM is only installed in .venv-vllm (workflow/scripts/setup_vllm_venv.sh)")

from ead.analyses.common import task_prompt  # noqa: E402
from ead.samplers.engines import encode_prompts  # noqa: E402
from tests.conftest import LOGIT_ATOL, entropy_tolerance  # noqa: E402
from tests.vllm.test_vllm_processors import ENGINE_ENV, write_tiny_llama  # noqa: E402

VLLM_OPTIONS = json.dumps({"enforce_eager": True, "max_model_len": 128, "max_num_seqs": 16})


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory) -> Path:
    return write_tiny_llama(tmp_path_factory.mktemp("tiny_llama"))


def questions_table(path: Path, answers: list[str]) -> Path:
    """Questions in the tiny word-level vocabulary (w3..w319), so prompts are real tokens, not <unk>."""
    rng = np.random.default_rng(0)
    pd.DataFrame({
        "id": [f"q{i}" for i in range(len(answers))],
        "question": [" ".join(f"w{t}" for t in rng.integers(3, 320, size=6)) for _ in answers],
        "answer": answers,
        "subject": ["astronomy"] * len(answers),
    }).to_parquet(path)
    return path


#: Each job's required settings the tests do not vary (the shipped config's values; a test's own flags come later and
#: win, as argparse keeps the last).
JOB_SETTINGS = {
    "entropy_by_position": ["--question-seed", "0", "--seed", "0", "--batch-size", "96", "--tau", "1.0"],
    "forking": ["--question-seed", "1", "--seed", "0", "--batch-size", "64", "--tau", "1.0",
                "--prefix-selection", "random"],
    "majority_scaling": ["--question-seed", "0", "--seed", "0", "--batch-size", "64"],
}


def run_analysis(job: str, model_dir: Path, data: Path, out_dir: Path, *args: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    out, samples = out_dir / f"{job}.csv", out_dir / f"{job}_samples.parquet"
    command = [sys.executable, "-m", f"ead.analyses.{job}", "--model", str(model_dir), "--data", str(data),
               "--engine", "vllm", "--dtype", "float32", "--vllm-options", VLLM_OPTIONS, "--prompt-format", "plain",
               "--bootstrap", "100", "--threads", "2", "--samples-out", str(samples), "--out", str(out),
               *JOB_SETTINGS[job], *args]
    proc = subprocess.run(command, env={**os.environ, **ENGINE_ENV}, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-6000:]
    return pd.read_csv(out), pd.read_parquet(samples)


def test_entropy_by_position_on_vllm_gets_full_vocabulary_entropies_of_the_sampled_tokens(model_dir, tmp_path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    data = questions_table(tmp_path / "mmlu.parquet", ["A", "B", "C"])
    table, samples = run_analysis("entropy_by_position", model_dir, data, tmp_path, "--task", "mmlu",
                                  "--num-questions", "3", "--samples", "2", "--max-new-tokens", "24",
                                  "--batch-size", "4")
    assert len(samples) == 6 and set(table.engine) == {"vllm"} and set(table.model_name) == {model_dir.name}
    assert table.position.min() == 0 and table.position.max() < 24 and (table.mean_entropy > 0).all()

    # independent reference: one forward pass over prompt + response, entropy of softmax(logits) at tau = 1
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32, local_files_only=True).eval()
    tokenizer = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
    questions = pd.read_parquet(data).set_index("id")
    for row in samples.itertuples():
        prompt = encode_prompts(tokenizer, [task_prompt(questions.loc[row.prompt_id, "question"], "mmlu")], False)[0]
        tokens = list(row.token_ids)
        assert len(tokens) == len(row.entropies) == row.num_tokens > 0
        with torch.no_grad():
            logits = model(torch.tensor([prompt + tokens])).logits[0, len(prompt) - 1: len(prompt) - 1 + len(tokens)]
        log_p = torch.log_softmax(logits.double(), -1)
        expected = -(log_p.exp() * log_p).sum(-1).numpy()
        # the job's rescoring pass pads and batches responses: logits round apart by up to LOGIT_ATOL
        # (tests/conftest.py)
        assert (np.abs(np.asarray(row.entropies) - expected) <= entropy_tolerance(expected, LOGIT_ATOL)).all()
    # the logged mean over positions per response matches its entropies
    np.testing.assert_allclose(samples.mean_entropy, [np.mean(e) for e in samples.entropies], rtol=1e-9)


def test_forking_on_vllm_continues_each_prefix_within_the_budget(model_dir, tmp_path):
    data = questions_table(tmp_path / "mmlu.parquet", ["A", "B", "C"])
    table, samples = run_analysis("forking", model_dir, data, tmp_path, "--task", "mmlu", "--num-questions", "3",
                                  "--reference-samples", "2", "--fork-points", "0", "4", "--continuations", "3",
                                  "--k", "1", "3", "--max-new-tokens", "16", "--question-seed", "0")
    assert set(zip(table.fork_point, table.k)) == {(0, 1), (0, 3), (4, 1), (4, 3)} and set(table.engine) == {"vllm"}
    forked = samples[samples.fork_point == 4]
    assert (forked.num_tokens <= 12).all() and (samples[samples.fork_point == 0].num_tokens <= 16).all()
    # every continuation of one reference starts with that reference's first 4 tokens (words of this vocabulary)
    for _, group in forked.groupby("unit"):
        assert len(group) == 3
        assert len({tuple(text.split()[:4]) for text in group.text}) == 1


def test_majority_scaling_on_vllm_scores_every_sampler_and_n(model_dir, tmp_path):
    data = questions_table(tmp_path / "math.parquet", ["1", "2", "3"])
    schedules = [json.dumps({"name": "ead", "tau_max": 1.2, "tau_min": 0.1, "d0": 25, "warmup": 2}),
                 json.dumps({"name": "fixed", "tau": 0.6}), json.dumps({"name": "fixed", "tau": 1.0})]
    table, samples = run_analysis("majority_scaling", model_dir, data, tmp_path, "--task", "math500",
                                  "--num-questions", "3", "--samples", "4", "--max-new-tokens", "12",
                                  "--schedules", *schedules)
    assert sorted(table.sampler.unique()) == sorted(samples.sampler.unique()) and table.sampler.nunique() == 3
    assert set(table.n) == {1, 2, 3, 4} and set(table.engine) == {"vllm"}
    assert len(samples) == 3 * 3 * 4 and samples.num_tokens.between(1, 12).all()
    assert table.maj_at_n.between(0, 1).all()
