"""What several tests of the analyses share: samples tables, the entropy job on a tiny model, a tiny countdown
policy, and the measured-schedule tables."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ead.analyses import majority_scaling
from ead.analyses.common import (
    add_vote_groups,
)
from ead.analyses.entropy_by_position import main as entropy_main
from ead.analyses.measured_schedule import main
from ead.tables import (
    ENTROPY_BY_POSITION,
    ENTROPY_SAMPLES,
)


def majority_samples():
    """A graded Maj@N samples table: 2 samplers x 4 questions x 3 samples, letter answers, with the settings columns."""
    rng = np.random.default_rng(7)
    rows = [{"sampler": sampler, "schedule_params": f'{{"tau": {tau}}}', "prompt_id": f"q{q}", "sample_id": i,
             "text": "", "num_tokens": int(rng.integers(1, 20)), "finished": True,
             "predicted": rng.choice(["A", "B", None]), "correct": 0.0}
            for sampler, tau in (("tau = 0.6", 0.6), ("tau = 1.0", 1.0)) for q in range(4) for i in range(3)]
    samples = pd.DataFrame(rows)
    samples["correct"] = (samples["predicted"] == "A").astype(float)  # the reference answer is A
    samples = add_vote_groups(samples, majority_scaling.UNIT, "mmlu")
    return samples.assign(model_name="m", engine="hf", task="mmlu", samples_per_question=3, sampling_seed=0)


@pytest.fixture
def mmlu_like(tmp_path):
    path = tmp_path / "mmlu.parquet"
    pd.DataFrame({"id": [f"q{i}" for i in range(6)],
                  "question": [f"what is {i} + 1 ? (a) {i} (b) {i + 1}" for i in range(6)],
                  "answer": ["B"] * 6, "subject": ["astronomy", "anatomy"] * 3}).to_parquet(path)
    return path


def run_entropy(model_dir, data, tmp_path, *extra, summary=("--bootstrap", "100")):
    """The entropy job, by default in one go (samples and summary); ``summary=()`` writes the samples only."""
    out, samples = tmp_path / "entropy.csv", tmp_path / "entropy_samples.parquet"
    summary = [*summary, "--out", str(out)] if summary else []
    entropy_main(["--model", str(model_dir), "--data", str(data), "--task", "mmlu", "--num-questions", "10",
                  "--engine", "hf", "--dtype", "float32", "--question-seed", "0", "--seed", "0", "--tau", "1.0",
                  "--samples", "2", "--max-new-tokens", "16", "--prompt-format", "plain", "--batch-size", "3",
                  "--threads", "1", "--samples-out", str(samples), *summary, *extra])
    return (pd.read_csv(out) if summary else None), ENTROPY_SAMPLES.read(samples)


EAD = {"tau_max": 1.2, "tau_min": 0.1, "d0": 25, "step_factor": 5, "d_max": 40000, "warmup": 0, "decay_scale": 1}


#: a template prefix of 3 near-deterministic positions, then choices
CURVE = [0.01, 0.02, 0.05, 0.9, 1.1, 0.8, 1.0, 0.7, 0.6, 0.5, 0.4, 0.3]


def entropy_table(curve=CURVE):
    return pd.DataFrame({"position": range(len(curve)), "mean_entropy": curve, "ci_low": 0.0, "ci_high": 0.0,
                         "num_questions": 4, "num_responses": 8, "fraction_alive": 1.0, "model_name": "p",
                         "engine": "hf", "task": "countdown"})


def measured_table(tmp_path) -> Path:
    """The job's table for policy "p" (entropy curve CURVE, responses of 30-36 tokens): c = 3, d0 = 16.5 / ln 2.1."""
    entropy, samples, out = tmp_path / "e.csv", tmp_path / "s.parquet", tmp_path / "m.csv"
    ENTROPY_BY_POSITION.write(entropy_table(), entropy)
    ENTROPY_SAMPLES.write(pd.DataFrame({"prompt_id": ["a"] * 4, "sample_id": range(4), "num_tokens": [30, 32, 34, 36],
                                        "mean_entropy": 0.5, "entropies": [[0.5]] * 4, "model_name": "p",
                                        "engine": "hf", "task": "countdown"}), samples)
    main(["--policy", "p", "--entropy", str(entropy), "--samples", str(samples), "--ead", json.dumps(EAD),
          "--entropy-fraction", "0.5", "--window", "8", "--length-quantile", "0.5", "--floor-fraction", "0.5",
          "--max-position", "40", "--out", str(out)])
    return out


@pytest.fixture(scope="module")
def tiny_policy(tmp_path_factory):
    """A randomly initialised tiny countdown policy (character tokenizer) and a countdown table with a test split."""
    from ead.data.countdown import generate_countdown
    from ead.models.tiny_policy import TinyPolicyShape, build_model, build_tokenizer

    root = tmp_path_factory.mktemp("tiny_policy")
    tokenizer = build_tokenizer()
    model = build_model(tokenizer, TinyPolicyShape(hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                                                   intermediate_size=64, max_position_embeddings=64), seed=0)
    model.save_pretrained(root / "policy")
    tokenizer.save_pretrained(root / "policy")
    generate_countdown(seed=0, n_train=8, n_val=2, n_test=6).to_parquet(root / "countdown.parquet")
    return root / "policy", root / "countdown.parquet"
