"""A run's fingerprint: a digest of what each stage computed, so two runs (two machines, two kernel levels, a
change and its parent) can be compared bit for bit, and a difference is traced to the first stage where it appears.

One row per file (:data:`ead.tables.FINGERPRINT`), in the DAG's order of stages (:data:`STAGES`): the task data, the
policies' weights (``model.safetensors``), the step-0 evaluations, the premise probe, the RL cells (``steps.csv``
and ``eval_problems.csv`` beside each ``eval.csv`` given), the claims. A table's digest is of its content: the columns
that record where and how long it ran (:data:`ead.tables.RUN_COLUMNS`, :data:`ead.tables.TIMING_COLUMNS`) and the
claims' wording (:data:`WORDING_COLUMNS`) are left out, every other value enters at full precision. Equal digests
are equal numbers; one flipped bit in a weight changes its policy's digest and, through training, every stage after
it. :func:`run_digest` folds the rows into
the one short digest the README's result blocks quote beside their numbers.

``--check REFERENCE`` compares against a committed fingerprint (``tests/fixtures/smoke_fingerprint.csv`` for the
smoke profile) and exits 1 naming the first stage that diverged, the file and both digests.

A user compares a run with a committed one (the README's blocks' runs: benchmarks/results/*_fingerprint.csv; a smoke
run: tests/fixtures/smoke_fingerprint.csv, :data:`REFERENCES`). Two runs of another profile, other config files or
another CPU level are said to be that, first, before any stage is compared; every table is read through its
contract where it has one (:data:`CONTRACTS`), so a damaged run is refused, not recorded:
    python -m ead.fingerprint --compare results/fingerprint.csv benchmarks/results/default_fingerprint.csv

Run (the workflow's rule ``fingerprint`` passes every result file of ``rule all``'s tables, then the claims):
    python -m ead.fingerprint --inputs results/data/countdown.parquet results/models/tiny1m ... results/claims.csv \
        --out results/fingerprint.csv [--check tests/fixtures/smoke_fingerprint.csv]
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from ead.io import file_sha256, read_table, setup_logging
from ead.numerics import job_cpu_level
from ead.tables import CLAIMS, EVAL_PROBLEMS, FINGERPRINT, RUN_COLUMNS, STEPS, TIMING_COLUMNS

__all__ = ["STAGES", "DIGEST_LENGTH", "REFERENCES", "digest_files", "first_divergence", "provenance_difference",
           "run_digest", "table_digest"]

#: Hex digits kept of each sha256: enough to tell any two results apart, short enough to quote.
DIGEST_LENGTH = 16
#: The stages in the DAG's order, each with the pattern of the paths (relative to the run's root) that belong to it.
STAGES = (
    ("data", re.compile(r"results/data/[^/]+\.parquet")),
    ("policies", re.compile(r"results/models/[^/]+/model\.safetensors")),
    ("step_0_evaluation", re.compile(r"results/(eval/[^/]+_base|rl/base/[^/]+/eval_problems)\.csv")),
    ("premises", re.compile(r"results/premises/[^/]+\.csv")),
    ("rl_cells", re.compile(r"results/rl/(?!base/)[^/]+/[^/]+/[^/]+/n\d+/seed\d+/(steps|eval_problems)\.csv")),
    ("claims", re.compile(r"results/(analyses/)?claims\.csv")),
)


def _stage(path: str) -> str:
    for stage, pattern in STAGES:
        if pattern.fullmatch(path):
            return stage
    raise ValueError(f"{path}: no stage of the fingerprint holds this file (ead.fingerprint.STAGES)")


#: The claims' prose (a claim's statement from the config, the verdict's rule and the row's scope explained in
#: words): wording, which the code's text changes without changing a number, so a fingerprint left out of them still
#: matches a run made before a wording fix. The numbers and the verdict itself stay in.
WORDING_COLUMNS = frozenset({"statement", "rule", "scope"})


def _canonical_value(value) -> str:
    if isinstance(value, (list, tuple, np.ndarray)):  # every element, never numpy's summary of a long array
        return repr(np.asarray(value).tolist())
    return repr(value)


def _is_empty(value) -> bool:
    """None, pandas' NA, NaN or the empty string; an array or any other value is not empty."""
    return (value is None or value is pd.NA or (isinstance(value, str) and value == "")
            or (isinstance(value, float) and np.isnan(value)))


def _empty_everywhere(column: pd.Series) -> bool:
    return all(_is_empty(value) for value in column)


def table_digest(table: pd.DataFrame) -> str:
    """The digest of a table's content, without the columns that say where and how long its job ran, nor those
    empty in every row (an optional column a later version writes empty holds no number, so a run made before it
    existed keeps its digest): the column names, then every value (by its exact repr: floats round-trip, arrays
    element by element), row by row."""
    kept = table.drop(columns=[c for c in table.columns
                               if c in RUN_COLUMNS or c in TIMING_COLUMNS or c in WORDING_COLUMNS
                               or (len(table) and _empty_everywhere(table[c]))])
    digest = hashlib.sha256("\x1f".join(map(str, kept.columns)).encode())
    for row in kept.itertuples(index=False, name=None):
        digest.update(("\x1e" + "\x1f".join(map(_canonical_value, row))).encode())
    return digest.hexdigest()[:DIGEST_LENGTH]

#: The declared table a fingerprinted file is read with, by its path (relative to the run's root): a file that fails
#: its contract (a non-finite value, a missing column) is refused, not recorded; other files are read as they are.
CONTRACTS = (
    (re.compile(r"results/rl/(?!base/)[^/]+/[^/]+/[^/]+/n\d+/seed\d+/steps\.csv"), STEPS),
    (re.compile(r"results/rl/(?!base/)[^/]+/[^/]+/[^/]+/n\d+/seed\d+/eval_problems\.csv"), EVAL_PROBLEMS),
    (re.compile(r"results/(analyses/)?claims\.csv"), CLAIMS),
)
#: The committed fingerprint of each profile's run: what a user's run of that profile is compared with.
REFERENCES = {"default": "benchmarks/results/default_fingerprint.csv", "smoke": "tests/fixtures/smoke_fingerprint.csv"}
#: What a fingerprint records of how its run was made (:data:`ead.tables.RUN_COLUMNS`), in the order a difference is
#: said: two runs that differ in one of these are not expected to match.
PROVENANCE = (("profile", "profile"), ("config_files", "config files"), ("cpu_level", "CPU level"))


def _read_fingerprinted(path: Path, relative: str) -> pd.DataFrame:
    contract = next((table for pattern, table in CONTRACTS if pattern.fullmatch(relative)), None)
    return read_table(path) if contract is None else contract.read(path)


def _files_of(path: Path) -> list[Path]:
    """The files an input stands for: a model directory's weights, a cell's eval.csv its two source tables."""
    if path.is_dir():
        return [path / "model.safetensors"]
    if path.name == "eval.csv" and path.parent.name.startswith("seed") and "base" not in path.parts:
        return [path.parent / "steps.csv", path.parent / "eval_problems.csv"]
    if path.name == "eval.csv":  # a policy's step-0 evaluation: its per-problem counts
        return [path.parent / "eval_problems.csv"]
    return [path]


def digest_files(inputs: list[str | Path], root: str | Path = ".") -> pd.DataFrame:
    """The fingerprint rows of ``inputs`` (paths relative to ``root``, the run's root: the job's working directory),
    sorted by stage then path."""
    root = Path(root)
    rows = []
    for given in inputs:
        for path in _files_of(root / given):
            relative = path.relative_to(root).as_posix()
            stage = _stage(relative)
            if not path.is_file():
                raise FileNotFoundError(f"{path}: missing; the fingerprint needs it (run snakemake to build it)")
            if path.suffix == ".safetensors":
                rows.append((stage, relative, file_sha256(path)[:DIGEST_LENGTH], 0))
            else:
                table = _read_fingerprinted(path, relative)
                rows.append((stage, relative, table_digest(table), len(table)))
    order = {stage: index for index, (stage, _) in enumerate(STAGES)}
    table = pd.DataFrame(rows, columns=list(FINGERPRINT.columns)).drop_duplicates("path")
    return table.sort_values(["stage", "path"], key=lambda c: c.map(order) if c.name == "stage" else c,
                             ignore_index=True)


def run_digest(fingerprint: pd.DataFrame) -> str:
    """One short digest of a whole fingerprint (every row's path and digest, in order)."""
    text = "\n".join(f"{path} {digest}" for path, digest in zip(fingerprint["path"], fingerprint["digest"]))
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def _made_with(fingerprint: pd.DataFrame, column: str) -> str:
    values = fingerprint[column].fillna("").astype(str).unique() if column in fingerprint else [""]
    return ", ".join(sorted(values)) or "(none)"


def provenance_difference(reference: pd.DataFrame, current: pd.DataFrame) -> str | None:
    """None where both runs were made alike (profile, config files, CPU level); else one line saying, first, how they
    differ: their numbers are then not expected to match, which is not a reproducibility failure."""
    for column, what in PROVENANCE:
        expected, found = _made_with(reference, column), _made_with(current, column)
        if expected != found:
            hint = (f"; a {found} run's committed reference is {REFERENCES[found]}"
                    if column == "profile" and found in REFERENCES else "")
            return (f"a different {what}: this run's is {found!r}, the reference's {expected!r}, so their numbers are "
                    f"not expected to match (not a reproducibility failure){hint}")
    return None


def first_divergence(reference: pd.DataFrame, current: pd.DataFrame) -> str | None:
    """None where ``current`` holds every file of ``reference`` with the same digest; else one line naming the
    first stage (in the DAG's order) where they part, the file and both digests, and the stages that still agree."""
    expected = dict(zip(reference["path"], reference["digest"]))
    found = dict(zip(current["path"], current["digest"]))
    agreed = []
    for stage, _ in STAGES:
        paths = sorted(reference.loc[reference["stage"] == stage, "path"])
        for path in paths:
            if found.get(path) != expected[path]:
                before = f"every stage before it matches ({', '.join(agreed)})" if agreed else "it is the first stage"
                if path not in found:
                    return f"stage {stage!r} diverged first: {path} is missing from this run; {before}"
                return (f"stage {stage!r} diverged first: {path} has digest {found[path]} here, {expected[path]} in "
                        f"the reference; {before}")
        if paths:
            agreed.append(stage)
    return None


def missing_fingerprint(path: str, role: str) -> str:
    """The message for a fingerprint file that is not there: what the file is and where one comes from."""
    if role == "run":
        return (f"{path}: no such fingerprint; a run writes its own as results/fingerprint.csv (runs/<profile>/results/"
                "fingerprint.csv for a profile other than the default), at the end of `snakemake --cores all`")
    known = "; ".join(f"{profile}: {reference}" for profile, reference in REFERENCES.items())
    return f"{path}: no such reference fingerprint; the committed ones, by profile: {known}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--inputs", nargs="+", help="result files and model directories of the run")
    parser.add_argument("--out", help="the fingerprint table (csv)")
    parser.add_argument("--check", default=None, help="a reference fingerprint: exit 1 naming the first divergence")
    parser.add_argument("--compare", nargs=2, metavar=("RUN", "REFERENCE"),
                        help="compare two fingerprint tables already written (e.g. results/fingerprint.csv and "
                             "benchmarks/results/default_fingerprint.csv): exit 1 naming the first divergence")
    args = parser.parse_args(argv)
    log = setup_logging("fingerprint")
    if args.compare:
        run, reference = args.compare
        compared = {}
        for path, role in ((run, "run"), (reference, "reference")):
            if not Path(path).is_file():
                sys.exit(missing_fingerprint(path, role))
            compared[role] = FINGERPRINT.read(path)
        difference = provenance_difference(compared["reference"], compared["run"])
        divergence = difference or first_divergence(compared["reference"], compared["run"])
        if divergence:
            sys.exit(f"{run} differs from {reference}: {divergence}")
        log.info("every file of %s matches (run digest %s)", reference, run_digest(compared["run"]))
        return
    if not (args.inputs and args.out):
        parser.error("--inputs and --out are required (or --compare RUN REFERENCE)")
    fingerprint = digest_files(args.inputs)
    FINGERPRINT.write(fingerprint, args.out)
    log.info("%d files, run digest %s (cpu level %s)", len(fingerprint), run_digest(fingerprint), job_cpu_level())
    if args.check:
        divergence = first_divergence(FINGERPRINT.read(args.check), fingerprint)
        if divergence:
            sys.exit(f"{args.out} differs from {args.check}: {divergence}")
        log.info("every file of %s matches", args.check)


if __name__ == "__main__":
    main()
