"""Tiny-policy SFT (ead.models.sft): a run killed mid-way resumes to the exact same weights, a checkpoint of other
settings is discarded, and the canonical and largest-first references."""

import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import torch
from safetensors.torch import load_file

from ead.data.countdown import (
    canonical_solution,
    generate_countdown,
    largest_first_solution,
    parse_problem,
    solve,
    verify_chain,
)
from ead.io import write_table
from ead.models.sft import main as sft_main
from ead.models.sft import training_solutions

TINY = ["--hidden-size", "32", "--num-hidden-layers", "2", "--num-attention-heads", "2", "--intermediate-size", "64",
        "--max-position-embeddings", "128"]


@pytest.fixture(scope="module")
def countdown_table(tmp_path_factory):
    path = tmp_path_factory.mktemp("data") / "countdown.parquet"
    write_table(generate_countdown(seed=1, n_train=200, n_val=5, n_test=5), path)
    return path


def sft_command(data, out, checkpoint, steps=300):
    return [sys.executable, "-m", "ead.models.sft", "--data", str(data), "--out", str(out / "model"),
            "--log-table", str(out / "log.csv"), "--checkpoint-dir", str(checkpoint), "--steps", str(steps),
            "--batch-size", "8", "--lr", "2e-3", "--warmup-steps", "20", "--checkpoint-every", "10", "--seed", "3",
            "--reference", "random", "--threads", "1", *TINY]


@pytest.mark.slow
def test_killed_run_resumes_to_identical_weights(countdown_table, tmp_path, killed_after_first_checkpoint):
    straight, resumed = tmp_path / "straight", tmp_path / "resumed"
    subprocess.run(sft_command(countdown_table, straight, tmp_path / "ckpt_a"), check=True, capture_output=True)

    killed_after_first_checkpoint(sft_command(countdown_table, resumed, tmp_path / "ckpt_b"),
                                  tmp_path / "ckpt_b" / "trainer_state.pt",
                                  timeout_s=120)
    assert not (resumed / "model").exists()
    rerun = subprocess.run(sft_command(countdown_table, resumed, tmp_path / "ckpt_b"), capture_output=True,
                           text=True, check=True)
    assert "resuming from" in rerun.stderr

    weights_a = load_file(straight / "model" / "model.safetensors")
    weights_b = load_file(resumed / "model" / "model.safetensors")
    assert weights_a.keys() == weights_b.keys()
    for name in weights_a:
        assert torch.equal(weights_a[name], weights_b[name]), name
    columns = ["step", "loss", "lr", "grad_norm"]  # tokens_per_s is wall-clock
    pd.testing.assert_frame_equal(pd.read_csv(straight / "log.csv")[columns], pd.read_csv(resumed / "log.csv")[columns])
    assert not (tmp_path / "ckpt_b").exists()  # a finished run cleans up its checkpoint


def test_missing_train_split_is_named(tmp_path):
    data = tmp_path / "val_only.csv"
    pd.DataFrame({"question": ["Numbers: 1 2\nTarget: 3\n"], "solution": ["1+2=3\n\\boxed{3}"],
                  "split": ["val"]}).to_csv(data, index=False)
    result = subprocess.run(sft_command(data, tmp_path, tmp_path / "ckpt"), capture_output=True, text=True)
    assert result.returncode != 0 and "no rows with split == 'train'" in result.stderr


@pytest.mark.slow
def test_a_checkpoint_of_other_settings_is_discarded_not_resumed(countdown_table, tmp_path,
                                                                   killed_after_first_checkpoint):
    checkpoint = tmp_path / "ckpt"
    killed_after_first_checkpoint(sft_command(countdown_table, tmp_path, checkpoint), checkpoint / "trainer_state.pt",
                                  timeout_s=120)
    edited = [*sft_command(countdown_table, tmp_path, checkpoint, steps=30), "--lr", "1e-3"]
    rerun = subprocess.run(edited, capture_output=True, text=True, check=True)
    assert "made with other settings or inputs" in rerun.stderr and "resuming from" not in rerun.stderr
    log = pd.read_csv(tmp_path / "log.csv")
    assert log["step"].tolist() == [10, 20, 30] and (log["lr"] <= 1e-3).all()  # every row from the new run (lr 1e-3)


def test_canonical_reference_is_one_valid_solution_per_problem_whatever_the_table_drew(countdown_table):
    train = pd.read_parquet(countdown_table).query("split == 'train'")
    canonical = training_solutions(train, "canonical", "countdown.parquet")
    assert training_solutions(train, "canonical", "countdown.parquet") == canonical  # the same on every call
    assert training_solutions(train, "random", "countdown.parquet") == list(train["solution"])
    for answer, chain in zip(train["answer"], canonical):
        assert verify_chain(chain, parse_problem(answer)).valid, (answer, chain)
    # the table's solution is drawn at random among a problem's solutions; the canonical one is not: it does not
    # depend on the generator's seed, nor on the order the numbers are given in
    multi = train[train["num_solutions"] >= 3]
    assert (multi["solution"].to_numpy() != [canonical[i] for i in np.flatnonzero(train["num_solutions"] >= 3)]).any()
    other_seed = generate_countdown(seed=7, n_train=400, n_val=5, n_test=5).query("split == 'train'")
    by_answer = dict(zip(train["answer"], canonical))
    other = dict(zip(other_seed["answer"], training_solutions(other_seed, "canonical", "other.parquet")))
    shared = by_answer.keys() & other.keys()
    assert shared and all(by_answer[answer] == other[answer] for answer in shared)
    assert canonical_solution([3, 5, 7], 22) == canonical_solution([7, 3, 5], 22)
    assert 22 in solve([3, 5, 7])
    with pytest.raises(ValueError, match=r"numbers=\[1, 1, 1\] target=100 has no solution"):
        canonical_solution([1, 1, 1], 100)


def _reachable(pool: list[int], target: int) -> bool:
    """Brute force, from the game's rules alone: combine any two numbers by + - * / (positive, exact) until one is
    left."""
    if len(pool) == 1:
        return pool[0] == target
    for i in range(len(pool)):
        for j in range(i + 1, len(pool)):
            a, b = max(pool[i], pool[j]), min(pool[i], pool[j])
            rest = [x for k, x in enumerate(pool) if k not in (i, j)]
            values = [a + b, a * b, a - b] + ([a // b] if b and a % b == 0 else [])
            if any(value > 0 and _reachable([*rest, value], target) for value in values):
                return True
    return False


def test_largest_first_reference_starts_with_the_two_largest_numbers_whenever_a_solution_does(countdown_table):
    train = pd.read_parquet(countdown_table).query("split == 'train'").head(150)
    chains = training_solutions(train, "largest_first", "countdown.parquet")
    starts_largest = 0
    for numbers, target, answer, chain in zip(train["numbers"], train["target"], train["answer"], chains):
        assert verify_chain(chain, parse_problem(answer)).valid, (answer, chain)
        *rest, b, a = sorted(int(n) for n in numbers)
        first_moves = [a + b, a * b, a - b] + ([a // b] if a % b == 0 else [])
        possible = any(value > 0 and _reachable([*rest, value], int(target)) for value in first_moves)
        first = re.match(r"(\d+)[-+*/](\d+)=", chain)
        if possible:
            starts_largest += 1
            assert sorted(map(int, first.groups())) == [b, a], (answer, chain)
        else:
            assert chain == canonical_solution(numbers, target), (answer, chain)
    assert 0.4 < starts_largest / len(train) < 1  # the rule fits most problems, not all: a fork it can be wrong at
    # by hand: 10+3=13, 13*2=26 is the only way to 26 that starts with 10 and 3; no way to 2 starts with 14 and 9
    assert largest_first_solution([3, 10, 2], 26) == "10+3=13\n13*2=26\n\\boxed{26}"
    assert largest_first_solution([2, 9, 14], 2) == canonical_solution([2, 9, 14], 2) == "9-2=7\n14/7=2\n\\boxed{2}"


def test_canonical_reference_needs_a_task_that_offers_it_and_a_misspelled_reference_is_refused(tmp_path, capsys):
    arithmetic = pd.DataFrame({"question": ["1+2"], "solution": ["3"], "split": ["train"], "source": ["arithmetic"]})
    with pytest.raises(SystemExit, match=r"arith\.parquet: reference 'canonical' is not one task 'arithmetic' offers "
                                         r"\(\['random'\]\)"):
        training_solutions(arithmetic, "canonical", "arith.parquet")
    with pytest.raises(ValueError,
                       match=r"reference 'canonicl' is not one of \['random', 'canonical', 'largest_first'\]"):
        training_solutions(arithmetic, "canonicl", "arith.parquet")
    command = sft_command(tmp_path / "none.parquet", tmp_path, tmp_path / "ckpt")[3:]
    command[command.index("random")] = "canonicl"
    with pytest.raises(SystemExit):
        sft_main(command)
    assert "--reference: invalid choice: 'canonicl' (choose from" in capsys.readouterr().err


def test_a_noisy_teachers_solutions_are_the_teachers_and_noise_without_a_teacher_is_refused():
    from ead.data.strategy import generate_strategy, teacher_responses

    train = generate_strategy(seed=0, n_train=200, n_val=1, n_test=1).query("split == 'train'")
    assert training_solutions(train, "random", "s.parquet", 0.9, 3, 0.05) == teacher_responses(
        train["question"], 0.9, 3, 0.05)
    with pytest.raises(SystemExit, match="--teacher-execution-noise is the biased teacher's"):
        training_solutions(train, "random", "s.parquet", None, 3, 0.05)
