"""The grader under load: math-verify's own real-data test cases (tests/fixtures/math_verify_cases.json) graded
idle and beside busy processes, to check that machine load no longer turns right answers into timeouts (under
the former wall-clock limit, 245/252 idle became 214/252 beside a running pipeline).

Each condition grades every case with a fresh grader (new workers, empty cache) and the config's grader settings
(``timeout_s`` a CPU-time budget, a timed-out answer retried once): the score (cases whose grade agrees with the
case's label), the statuses, and the wall time. ``--busy N`` starts N processes spinning on the CPU beside the
grader for the loaded conditions. Writes a markdown snippet with the command, the load average and the numbers.

Run: ``python benchmarks/bench_grader_load.py --busy 2 --repeats 3 --out benchmarks/results/grader_load.md``.
The grader of another revision (e.g. before the change) runs with that revision's defaults:
``mkdir /tmp/before && git archive b68bc6a src | tar -x -C /tmp/before``, then add ``--grader-src /tmp/before/src``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "tests" / "fixtures" / "math_verify_cases.json"
SPIN = "while True: pass"


STATUSES = ("correct", "wrong", "no_answer", "timeout", "error")


def grade_cases(cases: list[dict]) -> dict:
    from ead.rewards import Grader, GraderSettings

    grader = Grader.from_settings(GraderSettings())
    try:
        grader.grade("\\boxed{1}", "1", "math")  # start the worker outside the timed part
        started = time.monotonic()
        grades = grader.grade_many([case["pred"] for case in cases], [case["gold"] for case in cases], "math")
        seconds = time.monotonic() - started
    finally:
        grader.close()
    agree = sum((grade.score == 1.0) == bool(case["expected"]) for grade, case in zip(grades, cases))
    counts = Counter(grade.status for grade in grades)
    return {"agree": agree, "correct": sum(grade.score == 1.0 for grade in grades), "seconds": seconds,
            "statuses": {status: counts.get(status, 0) for status in STATUSES},
            "retries": grader.stats.get("retries", 0),
            "timed_out": [i for i, grade in enumerate(grades) if grade.status == "timeout"]}


def run_condition(cases, busy: int) -> dict:
    spinners = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(busy)]
    try:
        time.sleep(1.0 if busy else 0.0)
        load_before = os.getloadavg()[0]
        result = grade_cases(cases)
        result["load"] = (load_before, os.getloadavg()[0])
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--busy", type=int, default=2, help="busy processes beside the grader in the loaded runs")
    parser.add_argument("--repeats", type=int, default=1, help="runs of each condition, interleaved")
    parser.add_argument("--out", type=Path, default=None, help="markdown snippet to write")
    parser.add_argument("--grader-src", type=Path, default=None,
                        help="the src/ directory of another checkout whose grader to measure (default: this one's)")
    args = parser.parse_args(argv)
    if args.grader_src is not None:
        sys.path.insert(0, str(args.grader_src.resolve()))
    import ead.rewards
    from ead.rewards import GraderSettings

    cases = json.loads(CASES.read_text())["cases"]
    settings = GraderSettings()
    rows = []
    for repeat in range(args.repeats):
        for busy in (0, args.busy):
            result = run_condition(cases, busy)
            rows.append((busy, result))
            print(f"busy={busy} repeat={repeat}: agree {result['agree']}/{len(cases)}, correct {result['correct']}, "
                  f"{result['statuses']}, retries {result['retries']}, {result['seconds']:.1f} s, "
                  f"load {result['load'][0]:.1f}->{result['load'][1]:.1f}", flush=True)
    command = "python benchmarks/bench_grader_load.py " + " ".join(argv if argv is not None else sys.argv[1:])
    lines = [f"Command: `{command}` ({platform.node()}, {os.cpu_count()} CPUs, {time.strftime('%Y-%m-%d')}; grader "
             f"settings: timeout_s {settings.timeout_s} s, workers {settings.workers}; grader from "
             f"{Path(ead.rewards.__file__).parents[2]})", "",
             "| busy processes | agrees with label | scored correct | timeouts | retries | errors | wall s | "
             "1-min load (start -> end) |", "|---|---|---|---|---|---|---|---|"]
    for busy, result in rows:
        lines.append(f"| {busy} | {result['agree']}/{len(cases)} | {result['correct']} | "
                     f"{result['statuses']['timeout']} | {result['retries']} | {result['statuses']['error']} | "
                     f"{result['seconds']:.1f} | {result['load'][0]:.1f} -> {result['load'][1]:.1f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)


if __name__ == "__main__":
    main()
