"""Supervised fine-tuning of the tiny policy on its task's train split (reference solutions, or a teacher's).

``--reference`` chooses each training problem's one target chain: ``random`` is the data table's ``solution`` (one
of the problem's solutions drawn at random by the generator), ``canonical`` is the same fixed solution per problem
on every call (:func:`ead.data.countdown.canonical_solution`; a reference countdown offers, ``Task.sft_references``
in ead.data.tasks), which makes the policy confident at the first move where ``random`` makes it spread its
probability over the solutions, and ``largest_first`` is a solution whose first equation combines the problem's two
largest numbers where one exists, else the canonical one (:func:`ead.data.countdown.largest_first_solution`): a
first-move rule that fits most problems but not all. ``--teacher-bias`` (a task with a biased teacher: strategy)
trains on a biased teacher's responses instead (:func:`ead.data.strategy.teacher_responses`, drawn from ``--seed``):
the favourite strategy with that probability whatever the key, else the key's, always exactly executed; a policy
over-confident at its fork by construction.

Trains from scratch on CPU, checkpointing every ``--checkpoint-every`` steps; a killed run restarted with the
same arguments resumes from the last checkpoint and ends with exactly the weights of an uninterrupted run (the
batch of step s is drawn from a generator seeded by (seed, s), so nothing depends on how the run was split).
Writes the model (safetensors + tokenizer) to ``--out`` and a per-step training table to ``--log-table``.

Run:
    python -m ead.models.sft --data results/data/countdown.parquet --out results/models/tiny_policy \
        --log-table results/models/tiny_policy_sft_log.csv --checkpoint-dir results/checkpoints/sft \
        --steps 400 --batch-size 128 --lr 2e-3 --seed 0 --reference random ...
"""

from __future__ import annotations

import argparse
import json
import math
import time
from dataclasses import asdict
from pathlib import Path

import pandas as pd
import torch
from tqdm import tqdm

from ead.checkpoints import discard, job_fingerprint, resumable, stamp
from ead.data.tasks import get_task, synthetic_tasks, table_task
from ead.io import atomic_directory, read_table, setup_logging, write_table
from ead.models import check_model_digest, save_hf_model, write_model_digest
from ead.models.tiny_policy import TinyPolicyShape, build_model, build_tokenizer, encode_strict
from ead.numerics import pin_job

IGNORE = -100


def references() -> tuple[str, ...]:
    """Every reference an SFT can train on (``--reference``): ``random``, the table's own solution, and each one a
    synthetic task offers (ead.data.tasks)."""
    return ("random", *dict.fromkeys(reference for name in synthetic_tasks()
                                     for reference in get_task(name).sft_references))


def training_solutions(rows: pd.DataFrame, reference: str, source: str, teacher_bias: float | None = None,
                       seed: int = 0, teacher_execution_noise: float | None = None) -> list[str]:
    """The target response of each training row under ``reference`` (one of :func:`references` the table's task
    offers), or, given a ``teacher_bias``, the task's biased teacher's (its draws seeded by ``seed``; its output digits
    noisy with probability ``teacher_execution_noise``)."""
    if teacher_execution_noise is not None and teacher_bias is None:
        raise SystemExit(f"{source}: --teacher-execution-noise is the biased teacher's; give --teacher-bias too")
    if reference not in references():
        raise ValueError(f"reference {reference!r} is not one of {list(references())}")
    task = get_task(table_task(rows, source, "SFT", lambda task: task.synthetic))
    if teacher_bias is not None:
        if reference != "random" or task.teacher_responses is None:
            raise SystemExit(f"{source}: a teacher bias needs a task with a biased teacher and reference random, got "
                             f"task {task.name!r} and reference {reference!r}")
        return task.teacher_responses(rows["question"], teacher_bias, seed, teacher_execution_noise or 0.0)
    if reference == "random":
        return list(rows["solution"])
    if reference not in task.sft_references:
        raise SystemExit(f"{source}: reference {reference!r} is not one task {task.name!r} offers "
                         f"({['random', *task.sft_references]})")
    solution = task.sft_references[reference]
    return [solution(row) for row in rows.to_dict("records")]


def encode_examples(tokenizer, questions, solutions) -> tuple[torch.LongTensor, torch.LongTensor]:
    """Right-padded (input_ids, labels); labels cover the response (solution + EOS) only."""
    rows = []
    for question, solution in zip(questions, solutions):
        prompt = encode_strict(tokenizer, question)
        response = encode_strict(tokenizer, solution, add_special_tokens=False) + [tokenizer.eos_token_id]
        rows.append((prompt + response, [IGNORE] * len(prompt) + response))
    width = max(len(ids) for ids, _ in rows)
    input_ids = torch.full((len(rows), width), tokenizer.pad_token_id, dtype=torch.long)
    labels = torch.full((len(rows), width), IGNORE, dtype=torch.long)
    for i, (ids, target) in enumerate(rows):
        input_ids[i, : len(ids)] = torch.tensor(ids)
        labels[i, : len(target)] = torch.tensor(target)
    return input_ids, labels


def learning_rate(step: int, total: int, peak: float, warmup: int) -> float:
    """Linear warm-up then cosine decay to 10% of the peak."""
    if step < warmup:
        return peak * (step + 1) / warmup
    progress = (step - warmup) / max(1, total - warmup)
    return peak * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))


def _save_checkpoint(directory: Path, model, optimizer, step: int, log_rows: list[dict], fingerprint: str) -> None:
    with atomic_directory(directory) as staging:
        model.save_pretrained(staging / "model", safe_serialization=True)
        write_model_digest(staging / "model")
        torch.save({"optimizer": optimizer.state_dict(), "step": step}, staging / "trainer_state.pt")
        (staging / "log.json").write_text(json.dumps(log_rows))
        stamp(staging, fingerprint)


def train(data: str, out: str, log_table: str, checkpoint_dir: str, *, steps: int, batch_size: int, lr: float,
          warmup_steps: int, seed: int, checkpoint_every: int, shape: TinyPolicyShape, reference: str,
          teacher_bias: float | None = None, teacher_execution_noise: float | None = None, log_every: int = 10):
    log = setup_logging("sft")
    table = read_table(data)
    train_rows = table[table["split"] == "train"]
    if train_rows.empty:
        raise SystemExit(f"{data}: no rows with split == 'train'")
    tokenizer = build_tokenizer()
    solutions = training_solutions(train_rows, reference, data, teacher_bias, seed, teacher_execution_noise)
    input_ids, labels = encode_examples(tokenizer, train_rows["question"], solutions)
    trained_on = (f"{reference} reference" if teacher_bias is None else f"teacher of bias {teacher_bias}"
                  + ("" if teacher_execution_noise is None else f", execution noise {teacher_execution_noise}"))
    log.info("%d training examples (%s), max length %d tokens", len(input_ids), trained_on, input_ids.shape[1])
    if input_ids.shape[1] > shape.max_position_embeddings:
        raise SystemExit(f"examples of {input_ids.shape[1]} tokens exceed max_position_embeddings "
                         f"{shape.max_position_embeddings}")

    from transformers import LlamaForCausalLM

    checkpoint = Path(checkpoint_dir)
    # everything that shapes the weights or the log; a checkpoint made under other values is discarded
    run_settings = {"steps": steps, "batch_size": batch_size, "lr": lr, "warmup_steps": warmup_steps, "seed": seed,
                    "shape": asdict(shape), "log_every": log_every, "reference": reference}
    # only a teacher's run records its bias (and a noisy teacher its noise): the runs without keep their fingerprints
    # and log tables
    teacher = {} if teacher_bias is None else {"teacher_bias": teacher_bias}
    if teacher_execution_noise is not None:
        teacher["teacher_execution_noise"] = teacher_execution_noise
    run_settings.update(teacher)
    fingerprint = job_fingerprint(run_settings, [data])
    resuming = resumable(checkpoint, fingerprint, log)
    if resuming:
        check_model_digest(checkpoint / "model")
        model = LlamaForCausalLM.from_pretrained(checkpoint / "model", local_files_only=True, use_safetensors=True,
                                                 dtype=torch.float32)
    else:
        model = build_model(tokenizer, shape, seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.95), weight_decay=0.01)
    start, log_rows = 0, []
    if resuming:
        state = torch.load(checkpoint / "trainer_state.pt", weights_only=True)
        optimizer.load_state_dict(state["optimizer"])
        start, log_rows = state["step"], json.loads((checkpoint / "log.json").read_text())
        log.info("resuming from %s at step %d", checkpoint, start)
    model.train()
    n_params = sum(p.numel() for p in model.parameters())
    log.info("tiny policy: %.2fM parameters, vocab %d", n_params / 1e6, len(tokenizer))

    window_tokens, window_start = 0, time.perf_counter()
    for step in tqdm(range(start, steps), initial=start, total=steps, desc="sft", unit="step"):
        generator = torch.Generator().manual_seed(seed * 1_000_003 + step)
        index = torch.randint(len(input_ids), (batch_size,), generator=generator)
        batch_ids, batch_labels = input_ids[index], labels[index]
        width = int((batch_ids != tokenizer.pad_token_id).sum(-1).max())
        batch_ids, batch_labels = batch_ids[:, :width], batch_labels[:, :width]
        attention_mask = (batch_ids != tokenizer.pad_token_id).long()
        current_lr = learning_rate(step, steps, lr, warmup_steps)
        for group in optimizer.param_groups:
            group["lr"] = current_lr
        loss = model(input_ids=batch_ids, attention_mask=attention_mask, labels=batch_labels).loss
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        window_tokens += int(attention_mask.sum())
        if (step + 1) % log_every == 0 or step + 1 == steps:
            elapsed = time.perf_counter() - window_start
            log_rows.append({"step": step + 1, "loss": float(loss), "lr": current_lr, "grad_norm": float(grad_norm),
                             "tokens_per_s": window_tokens / elapsed})
            log.info("step %d loss %.4f lr %.2e", step + 1, float(loss), current_lr)
            window_tokens, window_start = 0, time.perf_counter()
        if (step + 1) % checkpoint_every == 0 and step + 1 < steps:
            _save_checkpoint(checkpoint, model, optimizer, step + 1, log_rows, fingerprint)

    save_hf_model(out, model, tokenizer)
    settings = {"seed": seed, "steps": steps, "batch_size": batch_size, "peak_lr": lr, "warmup_steps": warmup_steps,
                "reference": reference, **teacher, "parameters": n_params, **asdict(shape)}
    write_table(pd.DataFrame(log_rows).assign(**settings), log_table)
    discard(checkpoint)  # the run is complete: its checkpoint and the directories it leaves empty go
    log.info("saved the tiny policy to %s", out)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="task table with question/solution/split columns")
    parser.add_argument("--out", required=True, help="output model directory")
    parser.add_argument("--log-table", required=True, help="per-step training table (.csv/.parquet)")
    parser.add_argument("--checkpoint-dir", required=True, help="resume state (deleted when the run completes)")
    parser.add_argument("--steps", type=int, required=True)
    parser.add_argument("--batch-size", type=int, required=True)
    parser.add_argument("--lr", type=float, required=True)
    parser.add_argument("--warmup-steps", type=int, required=True)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--checkpoint-every", type=int, required=True)
    parser.add_argument("--reference", choices=references(), required=True,
                        help="which solution of each problem to train on: the table's random one, a canonical "
                             "one, or one starting with the two largest numbers (module docstring)")
    parser.add_argument("--teacher-bias", type=float, default=None,
                        help="strategy task only: train on a biased teacher's responses, the favourite strategy with "
                             "this probability whatever the key (default: the table's solutions; module docstring)")
    parser.add_argument("--teacher-execution-noise", type=float, default=None,
                        help="with --teacher-bias: each output digit of the teacher's responses is another digit with "
                             "this probability (default: exact executions)")
    for field in asdict(TinyPolicyShape()):  # the policy's shape, from its config entry
        parser.add_argument(f"--{field.replace('_', '-')}", type=int, required=True)
    parser.add_argument("--threads", type=int, required=True, help="torch threads (fixed: float sums depend on it)")
    args = parser.parse_args(argv)
    pin_job(args.threads)
    shape = TinyPolicyShape(**{field: getattr(args, field) for field in asdict(TinyPolicyShape())})
    train(args.data, args.out, args.log_table, args.checkpoint_dir, steps=args.steps, batch_size=args.batch_size,
          lr=args.lr, warmup_steps=args.warmup_steps, seed=args.seed, checkpoint_every=args.checkpoint_every,
          shape=shape, reference=args.reference, teacher_bias=args.teacher_bias,
          teacher_execution_noise=args.teacher_execution_noise)


if __name__ == "__main__":
    main()
