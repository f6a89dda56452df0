"""Shared pieces of the sampling analyses (entropy by position, forking, Maj@N): question selection, prompts by
task (chain-of-thought for the benchmarks, the bare problem for countdown), the sampling engine, vote keys and
groups, per-question Maj@N and the summary over questions. Not a job itself.

Every analysis samples through :func:`open_analysis_engine`: ``--engine hf`` (transformers on CPU, the default
profile) or ``--engine vllm`` (the paper profile on GPUs, with the EAD vLLM processor). Both draw from the same
distributions; only the random streams differ.

Each analysis is two steps: its job samples and grades and writes a samples table (``--samples-out``, declared in
:mod:`ead.tables`); its ``write_summary`` turns that table into the figure's summary table with bootstrap CIs, either
in the same run (``--out`` with ``--bootstrap``) or in its own job (``python -m ead.analyses.summary_tables``, what the
workflow runs), so a new bootstrap setting never resamples.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from ead.data.tasks import get_task, task_names, tasks
from ead.io import read_table
from ead.metrics import bootstrap_mean_ci, maj_at_n_curve, vote_groups
from ead.rewards import grade_many, report_grades, same_answer
from ead.samplers.engines import ENGINES, open_engine
from ead.schedule import Schedule
from ead.tables import STATUS_COLUMN

# Chain-of-thought instructions appended to each question (the model's chat template wraps the result as
# one user turn). The answer formats are the ones ead.rewards extracts.
COT_INSTRUCTIONS = {
    "choice": 'Think step by step, then finish with "The answer is (X)" where X is the letter of the correct choice.',
    "math": "Solve the problem step by step, then put the final answer in \\boxed{}.",
}


def task_prompt(question: str, task: str) -> str:
    """The prompt of a question: on a synthetic task (countdown, arithmetic) the question itself (the bare problem the
    tiny policies were trained on, e.g. ``ead.data.countdown.problem_prompt``; they know no instruction), else the
    question followed by the chain-of-thought instruction of its task kind."""
    known = tasks().get(task)
    if known is not None and known.synthetic:
        return question
    if known is None or known.grading not in COT_INSTRUCTIONS:
        supported = sorted(task_names(lambda kind: not kind.synthetic and kind.grading in COT_INSTRUCTIONS))
        raise ValueError(f"No chain-of-thought prompt for task {task!r}; supported: {supported}")
    return f"{question}\n\n{COT_INSTRUCTIONS[known.grading]}"


def solution_steps(solution: str) -> int:
    """Number of reasoning lines of a GSM8K reference solution (the final "#### answer" line excluded)."""
    return sum(1 for line in str(solution).splitlines() if line.strip() and not line.startswith("####"))


def sample_questions(table: pd.DataFrame, num_questions: int, seed: int, source: str,
                     max_solution_steps: int | None = None, subjects: list[str] | None = None,
                     split: str | None = None) -> pd.DataFrame:
    """A seeded random subset of ``num_questions`` rows (all rows if fewer), kept in the table's order.

    ``split`` first keeps only rows of that split (countdown: the tiny policies' held-out test split); ``subjects``
    keeps only rows of those subjects (e.g. MMLU-STEM); ``max_solution_steps`` keeps only
    questions whose reference ``solution`` has at most that many lines (GSM8K: the number of calculation steps),
    i.e. the easier questions.
    """
    for column in ("id", "question", "answer"):
        if column not in table.columns:
            raise SystemExit(f"{source}: no column {column!r}; columns are {list(table.columns)}")
    if num_questions < 1:
        raise SystemExit(f"num_questions must be >= 1, got {num_questions}")
    if split is not None:
        if "split" not in table.columns:
            raise SystemExit(f"{source}: no 'split' column to select split {split!r} from")
        if split not in set(table["split"]):
            raise SystemExit(f"{source}: no rows of split {split!r}; splits: {sorted(table['split'].unique())}")
        table = table[table["split"] == split]
    if subjects:
        if "subject" not in table.columns:
            raise SystemExit(f"{source}: no 'subject' column to select subjects {subjects} from")
        unknown = sorted(set(subjects) - set(table["subject"]))
        if unknown:
            raise SystemExit(f"{source}: unknown subject(s) {unknown}; known: {sorted(table['subject'].unique())}")
        table = table[table["subject"].isin(subjects)]
    if max_solution_steps is not None:
        if "solution" not in table.columns:
            raise SystemExit(f"{source}: no 'solution' column to count solution steps in")
        table = table[table["solution"].map(solution_steps) <= max_solution_steps]
        if table.empty:
            raise SystemExit(f"{source}: no question has at most {max_solution_steps} solution steps")
    if num_questions >= len(table):
        return table.reset_index(drop=True)
    rows = np.sort(np.random.default_rng(seed).choice(len(table), size=num_questions, replace=False))
    return table.iloc[rows].reset_index(drop=True)


def load_questions(args, max_solution_steps: int | None = None) -> tuple[pd.DataFrame, list[str]]:
    """The questions a job's command line selects (:func:`sample_questions` from ``--data``) and their prompts
    (:func:`task_prompt`). The synthetic tasks are the tiny policies', and their character tokenizer has no chat
    template, so ``--task countdown`` (or ``arithmetic``) refuses ``--prompt-format chat``."""
    if get_task(args.task).synthetic and args.prompt_format == "chat":
        raise SystemExit(f"--task {args.task} needs --prompt-format plain: the tiny policies were trained on the bare "
                         "problem prompt and have no chat template")
    questions = sample_questions(read_table(args.data), args.num_questions, args.question_seed, args.data,
                                 max_solution_steps=max_solution_steps, subjects=args.subjects, split=args.split)
    return questions, [task_prompt(q, args.task) for q in questions["question"]]


def vote_equivalence(task: str):
    """How vote keys are merged: math-verify equivalence for math tasks, exact match for letter choices."""
    return same_answer if get_task(task).grading == "math" else None


def add_vote_groups(samples: pd.DataFrame, unit_columns: list[str], task: str) -> pd.DataFrame:
    """``samples`` with a ``vote_group`` column: each sample's vote group within its unit (e.g. one question under
    one sampler), numbered in sample order, -1 = no vote (:func:`ead.metrics.vote_groups` with the task's
    equivalence). Grading work (math-verify for math tasks), so the compute jobs do it with their grader settings and
    the summary needs no grader.

    ``samples`` needs ``unit_columns``, ``sample_id`` and ``predicted`` (vote key or None).
    """
    equivalent = vote_equivalence(task)
    groups = pd.Series(-1, index=samples.index, dtype=np.int64)
    for _, group in samples.sort_values("sample_id").groupby(unit_columns, sort=True):
        keys = [None if pd.isna(k) else k for k in group["predicted"]]
        groups[group.index] = vote_groups(keys, equivalent)
    return samples.assign(vote_group=groups)


def maj_curves(samples: pd.DataFrame, unit_columns: list[str]) -> pd.DataFrame:
    """Exact Maj@N (N = 1..M) of every unit (e.g. one question under one sampler) from graded samples.

    ``samples`` needs ``unit_columns``, ``sample_id``, ``vote_group`` (:func:`add_vote_groups`) and ``correct``.
    Returns one row per (unit, N) with maj_at_n, num_samples and num_vote_groups.
    """
    rows = []
    for unit, group in samples.sort_values("sample_id").groupby(unit_columns, sort=True):
        unit = unit if isinstance(unit, tuple) else (unit,)
        groups = group["vote_group"].to_numpy(dtype=np.int64)
        curve = maj_at_n_curve(groups, group["correct"].to_numpy(dtype=np.float64))
        for n, value in enumerate(curve, start=1):
            rows.append({**dict(zip(unit_columns, unit)), "n": n, "maj_at_n": float(value),
                         "num_samples": len(group), "num_vote_groups": int(groups.max() + 1)})
    return pd.DataFrame(rows)


def bootstrap_cell_means(per_unit: pd.DataFrame, by: list[str], value: str, *, resamples: int,
                         seed: int) -> pd.DataFrame:
    """Mean of ``value`` over units within each ``by`` cell, with a 95% percentile bootstrap CI over units."""
    rows = []
    for cell, group in per_unit.groupby(by, sort=True):
        cell = cell if isinstance(cell, tuple) else (cell,)
        mean, low, high = bootstrap_mean_ci(group[value].to_numpy(), resamples=resamples, seed=seed)
        rows.append({**dict(zip(by, cell)), "value": mean, "ci_low": low, "ci_high": high,
                     "num_units": len(group)})
    return pd.DataFrame(rows)


def schedule_label(schedule: Schedule) -> str:
    """Short legend label of a schedule, e.g. 'EAD (1.2 -> 0.1, d 25)' or 'tau = 0.6'."""
    params = schedule.to_dict()
    if params["name"] == "fixed":
        return f"tau = {params['tau']:g}"
    if params["name"] == "ead":
        scale = f", scale {params['decay_scale']:g}" if params["decay_scale"] != 1 else ""
        return f"EAD ({params['tau_max']:g} -> {params['tau_min']:g}, d {params['d0']:g}{scale})"
    return json.dumps(params, sort_keys=True)


def add_common_arguments(parser) -> None:
    """Command-line arguments every sampling analysis shares: model, engine, questions, sampling, outputs.

    The workflow passes every setting from the config (``ead.settings.analyses.analysis_job_settings``) and no summary
    option: its own job summarises the samples (rule analysis_summary). So every experiment setting is a required flag:
    no default here restates a config value. The defaults left are behaviour no config key chooses (the chat template;
    every row when no split is asked; vLLM's own engine arguments).
    """
    parser.add_argument("--model", required=True, help="local HF model directory")
    parser.add_argument("--engine", choices=ENGINES, required=True, help="hf (transformers, CPU) or vllm (GPU)")
    parser.add_argument("--dtype", required=True, help="model weights dtype, e.g. float32 or bfloat16")
    parser.add_argument("--vllm-options", default=None,
                        help="JSON of vLLM engine arguments (--engine vllm; default: vLLM's own), "
                             "e.g. '{\"tensor_parallel_size\": 2}'")
    parser.add_argument("--data", required=True, help="questions table (id, question, answer)")
    parser.add_argument("--task", required=True, help="grader task of the data (sets the CoT prompt), e.g. mmlu")
    parser.add_argument("--subjects", nargs="+", default=None, help="only questions of these subjects (MMLU)")
    parser.add_argument("--split", default=None, help="only questions of this split (countdown); default: every row")
    parser.add_argument("--num-questions", type=int, required=True)
    parser.add_argument("--max-new-tokens", type=int, required=True, help="response budget in tokens")
    parser.add_argument("--question-seed", type=int, required=True, help="seed of the question selection")
    parser.add_argument("--seed", type=int, required=True, help="sampling seed")
    parser.add_argument("--batch-size", type=int, required=True, help="sequences per forward pass")
    parser.add_argument("--bootstrap", type=int, default=None,
                        help="bootstrap resamples of the summary table (with --out; bootstrap seed = --seed)")
    parser.add_argument("--prompt-format", choices=("chat", "plain"), default="chat",
                        help="chat = the question as one user turn of the model's chat template")
    parser.add_argument("--threads", type=int, required=True, help="torch threads of the job")
    parser.add_argument("--samples-out", required=True, help="the samples table (parquet)")
    parser.add_argument("--out", default=None,
                        help="also write the summary table (csv; with --bootstrap), as "
                             "python -m ead.analyses.summary_tables "
                             "would from --samples-out")


def summary_requested(parser, args, **summary_options) -> bool:
    """Whether the job also writes its summary table: ``--out`` and ``--bootstrap`` (and the analysis' own summary
    options, e.g. forking's ``--k``: ``{"--k": args.k}``) are given together or not at all."""
    options = {"--out": args.out, "--bootstrap": args.bootstrap, **summary_options}
    given = [flag for flag, value in options.items() if value is not None]
    if given and len(given) < len(options):
        parser.error(f"{', '.join(options)} go together (they make the summary table); got only {', '.join(given)}")
    return bool(given)


def sample_settings(samples: pd.DataFrame, sample_columns: list[str]) -> dict:
    """The settings columns of a samples table (every column but its per-sample ``sample_columns``), one value each:
    what the summary table carries over."""
    settings = [column for column in samples.columns if column not in sample_columns]
    mixed = [column for column in settings if samples[column].nunique(dropna=False) > 1]
    if mixed:
        raise ValueError(f"the samples come from more than one run: settings column(s) {mixed} differ between rows")
    return samples[settings].iloc[0].to_dict()


def open_analysis_engine(args):
    """The sampling engine the command line asks for (see :func:`add_common_arguments`)."""
    try:
        vllm_options = json.loads(args.vllm_options) if args.vllm_options is not None else {}
    except json.JSONDecodeError as error:
        raise SystemExit(f"--vllm-options is not JSON ({error}): {args.vllm_options!r}") from None
    if not isinstance(vllm_options, dict):
        raise SystemExit(f"--vllm-options must be a JSON object, got {args.vllm_options!r}")
    return open_engine(args.engine, args.model, dtype=args.dtype, batch_size=args.batch_size,
                       vllm_options=vllm_options)


def analysis_settings(args, **extra) -> dict:
    """Settings columns every analysis table carries (model, engine, data, prompt format, task), plus ``extra``."""
    return {"model": args.model, "model_name": Path(args.model).name, "engine": args.engine, "dtype": args.dtype,
            "data": args.data, "subjects": " ".join(args.subjects) if args.subjects else "all",
            "split": args.split or "all",
            "prompt_format": args.prompt_format, "task": args.task, **extra}


def grade_samples(samples: pd.DataFrame, references: list[str], task: str, what: str = "analysis") -> pd.DataFrame:
    """Add the grader's vote key (`predicted`), score (`correct`) and status (`grade_status`: a timeout is not a wrong
    answer) of every sampled text (in place; returned). Logs the status counts under ``what`` and fails if the share
    of timeouts passes ``grader.max_timeout_share`` (:func:`ead.rewards.report_grades`)."""
    grades = grade_many(samples["text"].tolist(), references, task)
    samples["predicted"] = [g.predicted for g in grades]
    samples["correct"] = [g.score for g in grades]
    samples[STATUS_COLUMN] = [g.status for g in grades]
    report_grades(grades, what)
    return samples
