"""Summary table of a sampling analysis (Figs. 1, 2, 9) from its samples table: the statistics step, no sampling.

The analysis jobs (``python -m ead.analyses.{entropy_by_position,forking,majority_scaling}``) sample, grade and
write a samples table (``--samples-out``); this job reads one (validated against its declaration in
:mod:`ead.tables`) and writes the analysis' summary table with 95% bootstrap CIs over questions (forking: over
references), ``results/analyses/<analysis>/<model>.csv`` (and ``entropy_by_role/<model>.csv`` from a tiny policy's
entropy samples), exactly as the analysis job itself does when given
``--out`` and ``--bootstrap``. Each analysis module owns its summary (its ``write_summary``); this module only
picks it. The workflow runs it as rule ``analysis_summary`` with ``analyses.bootstrap``, the analysis' ``seed`` and
forking's ``k``, so changing those re-summarises and never resamples.

Run:
    python -m ead.analyses.summary_tables --analysis forking \
        --samples results/analyses/forking/smollm2-135m-instruct_samples.parquet --bootstrap 1000 --seed 0 \
        --k 1 3 8 --out results/analyses/forking/smollm2-135m-instruct.csv
"""

from __future__ import annotations

import argparse

from ead.analyses import entropy_by_position, forking, majority_scaling
from ead.io import setup_logging
from ead.tables import ENTROPY_SAMPLES, FORKING_SAMPLES, MAJORITY_SAMPLES

#: summary (directory name of its tables) -> (the samples table it reads, its summary writer); entropy_by_role reads
#: the entropy job's samples (of a tiny policy: the roles of its task)
SUMMARIES = {
    "entropy_by_position": (ENTROPY_SAMPLES, entropy_by_position.write_summary),
    "entropy_by_role": (ENTROPY_SAMPLES, entropy_by_position.write_role_summary),
    "forking": (FORKING_SAMPLES, forking.write_summary),
    "majority_scaling": (MAJORITY_SAMPLES, majority_scaling.write_summary),
}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--analysis", choices=sorted(SUMMARIES), required=True)
    parser.add_argument("--samples", required=True, help="the analysis job's samples table (--samples-out)")
    parser.add_argument("--bootstrap", type=int, required=True, help="bootstrap resamples (analyses.bootstrap)")
    parser.add_argument("--seed", type=int, required=True,
                        help="bootstrap seed (the analysis' seed, as its job uses its sampling --seed)")
    parser.add_argument("--k", type=int, nargs="+", default=None, help="K of Pass@K and Maj@K (forking only)")
    parser.add_argument("--out", required=True, help="the summary table (csv)")
    args = parser.parse_args(argv)
    if (args.k is None) == (args.analysis == "forking"):
        parser.error("--k (K of Pass@K and Maj@K) is forking's summary option: required there, refused elsewhere")
    options = {"k": args.k} if args.analysis == "forking" else {}
    log = setup_logging(f"summarise {args.analysis}")
    samples_table, write_summary = SUMMARIES[args.analysis]
    table = write_summary(samples_table.read(args.samples), args.out, resamples=args.bootstrap, seed=args.seed,
                          log=log, **options)
    log.info("%d rows -> %s", len(table), args.out)


if __name__ == "__main__":
    main()
