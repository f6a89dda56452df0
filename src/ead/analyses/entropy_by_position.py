"""Entropy by response position (paper Figure 1): does the policy's uncertainty shrink along a response?

Samples ``--samples`` responses to each of ``--num-questions`` questions at a fixed temperature (tau = 1 by default)
and records the full-vocabulary entropy of softmax(logits) at every response position (not a top-k truncation: vLLM
returns only top-k log-probs, so with ``--engine vllm`` the HF model rescores the responses in one teacher-forced
pass). Per position: the mean over a question's responses still generating, then over questions, with a 95%
bootstrap CI over questions. Tables: :data:`ead.tables.ENTROPY_SAMPLES` (``--samples-out``),
:data:`ead.tables.ENTROPY_BY_POSITION` (``--out``, or later by ``python -m ead.analyses.summary_tables``) and, on
countdown, :data:`ead.tables.ENTROPY_BY_ROLE` (entropy by token role of the equation chain).

Run:
    python -m ead.analyses.entropy_by_position --model results/models/smollm2-135m-instruct \
        --data results/data/mmlu.parquet --task mmlu --num-questions 32 --samples 4 --max-new-tokens 160 \
        --engine hf --dtype float32 --threads 1 --question-seed 0 --seed 0 --batch-size 96 --tau 1.0 \
        --samples-out results/analyses/entropy_by_position/smollm2-135m-instruct_samples.parquet \
        --bootstrap 1000 --out results/analyses/entropy_by_position/smollm2-135m-instruct.csv
On a GPU with vLLM (the paper profile), give ``--engine vllm --dtype bfloat16`` and the hub model's directory.
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
import torch

from ead.analyses.common import (
    add_common_arguments,
    analysis_settings,
    load_questions,
    open_analysis_engine,
    sample_settings,
    summary_requested,
)
from ead.data.tasks import get_task, task_names
from ead.io import setup_logging
from ead.metrics import bootstrap_mean_ci
from ead.models import load_hf_model
from ead.numerics import pin_job
from ead.samplers.engines import encode_prompts, torch_dtype
from ead.samplers.hf import response_entropies
from ead.schedule import FixedTemperature
from ead.tables import ENTROPY_BY_POSITION, ENTROPY_BY_ROLE, ENTROPY_SAMPLES

#: The per-response columns of the samples table; every other column is a setting of the run.
SAMPLE_COLUMNS = ["prompt_id", "sample_id", "text", "num_tokens", "finished", "mean_entropy", "token_ids", "entropies"]


def entropy_by_position(prompt_ids, entropies, *, resamples: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Per-position aggregate of ragged per-token entropies (one array per response, its length = the response).

    At position t a response contributes only if it is longer than t. Per question: mean over its contributing
    responses; per position: mean over questions with at least one, and a bootstrap CI over those questions.
    """
    prompt_ids = list(prompt_ids)
    arrays = [np.asarray(e, dtype=np.float64) for e in entropies]
    if len(prompt_ids) != len(arrays):
        raise ValueError(f"{len(prompt_ids)} prompt ids for {len(arrays)} entropy arrays")
    questions = list(dict.fromkeys(prompt_ids))
    index = {q: i for i, q in enumerate(questions)}
    width = max((a.size for a in arrays), default=0)
    # sums and counts per (question, position): a masked dense layout of the ragged arrays
    sums = np.zeros((len(questions), width))
    counts = np.zeros((len(questions), width))
    for q, a in zip(prompt_ids, arrays):
        sums[index[q], : a.size] += a
        counts[index[q], : a.size] += 1
    rows = []
    for t in range(width):
        alive = counts[:, t] > 0
        per_question = sums[alive, t] / counts[alive, t]
        mean, low, high = bootstrap_mean_ci(per_question, resamples=resamples, seed=seed)
        rows.append({"position": t, "mean_entropy": mean, "ci_low": low, "ci_high": high,
                     "num_questions": int(alive.sum()), "num_responses": int(counts[:, t].sum()),
                     "fraction_alive": float(counts[:, t].sum() / len(arrays))})
    return pd.DataFrame(rows)


def write_summary(samples: pd.DataFrame, out, *, resamples: int, seed: int, log) -> pd.DataFrame:
    """The Fig. 1 table of a samples table (:data:`ead.tables.ENTROPY_SAMPLES`): :func:`entropy_by_position` with
    its CIs and the run's settings columns, written to ``out`` (:data:`ead.tables.ENTROPY_BY_POSITION`)."""
    table = entropy_by_position(samples["prompt_id"], samples["entropies"], resamples=resamples, seed=seed)
    table = table.assign(**sample_settings(samples, SAMPLE_COLUMNS))
    ENTROPY_BY_POSITION.write(table, out)
    early, late = table.head(16)["mean_entropy"].mean(), table.tail(16)["mean_entropy"].mean()
    log.info("%d responses, mean length %.1f tokens; mean entropy first 16 positions %.3f, last 16 %.3f nats",
             len(samples), samples["num_tokens"].mean(), early, late)
    return table


def token_role_names(task: str) -> tuple[str, ...]:
    """The token roles of a task's responses: the character roles of the task (``Task.roles``, ead.data.tasks; on
    countdown those of :data:`ead.data.countdown.ROLES`), and ``end`` for the end-of-sequence token of a finished
    response (the policy's decision to stop)."""
    return (*get_task(task).roles, "end")


def token_roles(text: str, num_tokens: int, finished: bool, task: str) -> list[str] | None:
    """The role (:func:`token_role_names`) of every token of a response of the tiny policies on ``task``, or None when
    the tokens do not map one to one onto the characters.

    Their tokenizer has one token per character, so a response of ``num_tokens`` tokens decodes to ``num_tokens``
    characters, one fewer when it ended with the end-of-sequence token (which decodes to nothing); the roles of the
    characters are the task's ``response_roles`` (countdown: :func:`ead.data.countdown.response_roles`). A response
    that breaks that count (another special token sampled inside it, which also decodes to nothing; or another
    tokenizer) has no token roles.
    """
    roles = get_task(task).response_roles(text)
    if len(roles) + int(finished) != num_tokens:
        return None
    return roles + ["end"] * int(finished)


def samples_task(samples: pd.DataFrame) -> str:
    """The one task of a samples table (its ``task`` column), a task whose responses have roles (ead.data.tasks)."""
    found = sorted(samples["task"].unique())
    with_roles = list(task_names(lambda task: task.response_roles is not None))
    if len(found) != 1 or found[0] not in with_roles:
        raise ValueError(f"token roles are defined on the responses of one task with character roles ({with_roles}); "
                         f"these are {found}")
    return found[0]


def entropy_by_role(samples: pd.DataFrame, *, resamples: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Mean entropy of the tokens of each role (:func:`token_roles`): per question the mean over every token of that
    role in its responses, then the mean over the questions that have one, with a 95% bootstrap CI over them.
    ``responses_left_out`` counts the responses without token roles.

    ``samples`` has prompt_id, text, num_tokens, finished and entropies (:data:`ead.tables.ENTROPY_SAMPLES`).
    """
    task = samples_task(samples)
    tokens, left_out = [], 0
    for row in samples.itertuples():
        roles = token_roles(row.text, row.num_tokens, row.finished, task)
        if roles is None:
            left_out += 1
            continue
        tokens.append(pd.DataFrame({"prompt_id": row.prompt_id, "role": roles,
                                    "entropy": np.asarray(row.entropies, dtype=np.float64)}))
    if not tokens:
        raise ValueError(f"none of the {len(samples)} responses has one token per character: token roles are defined "
                         "for the tiny policies' character tokenizer")
    tokens = pd.concat(tokens, ignore_index=True)
    per_question = tokens.groupby(["role", "prompt_id"], sort=False)["entropy"].agg(["mean", "size"]).reset_index()
    rows = []
    for role in token_role_names(task):
        group = per_question[per_question["role"] == role]
        if group.empty:  # e.g. no malformed line: no "other" token
            continue
        mean, low, high = bootstrap_mean_ci(group["mean"].to_numpy(), resamples=resamples, seed=seed)
        rows.append({"role": role, "mean_entropy": mean, "ci_low": low, "ci_high": high,
                     "num_questions": len(group), "num_tokens": int(group["size"].sum()),
                     "responses_left_out": left_out})
    return pd.DataFrame(rows)


def write_role_summary(samples: pd.DataFrame, out, *, resamples: int, seed: int, log) -> pd.DataFrame:
    """The Fig. 1 by-role table of a samples table (:data:`ead.tables.ENTROPY_SAMPLES` of a tiny policy on a task with
    character roles): :func:`entropy_by_role` with the run's settings columns, written to ``out``
    (:data:`ead.tables.ENTROPY_BY_ROLE`)."""
    table = entropy_by_role(samples, resamples=resamples, seed=seed).assign(**sample_settings(samples, SAMPLE_COLUMNS))
    ENTROPY_BY_ROLE.write(table, out)
    for row in table.itertuples():
        log.info("%s: %.3f [%.3f, %.3f] nats over %d tokens", row.role, row.mean_entropy, row.ci_low, row.ci_high,
                 row.num_tokens)
    return table


def rescore_entropies(samples: pd.DataFrame, prompt_token_ids: dict, model_dir: str, dtype: str,
                      batch_size: int) -> pd.DataFrame:
    """Fill ``entropies``/``mean_entropy`` of sampled responses from a teacher-forced HF pass (GPU if available)."""
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model, tokenizer = load_hf_model(model_dir, torch_dtype(dtype), device=device)
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    entropies = response_entropies(model, [prompt_token_ids[p] for p in samples["prompt_id"]],
                                   samples["token_ids"].tolist(), pad_token_id=pad_id, batch_size=batch_size)
    return samples.assign(entropies=entropies,
                          mean_entropy=[float(np.mean(e)) if len(e) else float("nan") for e in entropies])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_arguments(parser)
    parser.add_argument("--samples", type=int, required=True, help="responses per question (G)")
    parser.add_argument("--tau", type=float, required=True, help="sampling temperature (entropy is always at tau 1)")
    args = parser.parse_args(argv)
    with_summary = summary_requested(parser, args)
    log = setup_logging("entropy_by_position")
    pin_job(args.threads)

    questions, prompts = load_questions(args)
    chat_template = args.prompt_format == "chat"
    engine = open_analysis_engine(args)
    samples = engine.sample(questions["id"].tolist(), prompts, FixedTemperature(args.tau), n=args.samples,
                            max_new_tokens=args.max_new_tokens, seed=args.seed, chat_template=chat_template)
    engine.close()  # frees the accelerator for the HF model below; the tokenizer stays usable
    if samples["entropies"].isna().any():  # the engine does not record entropies (vLLM): rescore with HF
        prompt_tokens = dict(zip(questions["id"], encode_prompts(engine.tokenizer, prompts, chat_template)))
        log.info("rescoring %d responses with the HF model for full-vocabulary entropies", len(samples))
        samples = rescore_entropies(samples, prompt_tokens, args.model, args.dtype, args.batch_size)
    settings = analysis_settings(args, tau=args.tau, num_questions_requested=args.num_questions,
                                 samples_per_question=args.samples, max_new_tokens=args.max_new_tokens,
                                 question_seed=args.question_seed, sampling_seed=args.seed)
    samples = samples[SAMPLE_COLUMNS].assign(**settings)
    ENTROPY_SAMPLES.write(samples, args.samples_out)
    log.info("%d responses, mean length %.1f tokens", len(samples), samples["num_tokens"].mean())
    if with_summary:
        write_summary(samples, args.out, resamples=args.bootstrap, seed=args.seed, log=log)


if __name__ == "__main__":
    main()
