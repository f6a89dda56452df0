# Input functions of the summary and of the final target (Snakefile), the tables the summary, report and figures read.


def get_tables_read():
    """Every table the summary, the report or a final figure reads. Snakemake rebuilds a missing file only for a job
    that runs, and a summary or figure that exists does not run again: a deleted table (or one a failed job removed)
    would stay missing ("Nothing to be done", then --report fails on it) unless it is a target of `rule all`."""
    figures = set(final_figures(config))
    tables = [*rules.rl_tables.output, *rules.claims.output, *get_rl_learns_table(), *get_analysis_claims_table(),
              *get_base_eval_tables(), *get_premise_outputs(), *get_role_tables(None),
              *get_breakdown_table("signal"), *get_breakdown_table("groups")]
    for analysis in ANALYSES:
        tables += get_analysis_tables(analysis)(None)
    if "fig03_annealing_schedule" in figures:
        tables += [rules.schedule_table.output.table, *get_measured_schedule_tables()]
    if figures & set(rl_figures()):
        tables += rules.rl_paired_curves.output
    if SWITCHES.inference_only:
        tables += [*rules.inference_only_table.output]
    return list(dict.fromkeys(tables))


def get_fingerprint_inputs():
    """What the run's fingerprint digests, in the DAG's order: rule all's data, models, base evaluations and premise
    tables, then every cell's steps.csv and eval_problems.csv (the tables its numbers come from, not eval.csv: a new
    rl.eval.k re-summarises without changing a digest), then the claims."""
    tables = [path for path in get_final_tables() if os.path.basename(path) != "eval.csv"]
    return [*tables, *get_cell_outputs("steps"), *get_cell_outputs("eval_problems"), *rules.claims.output]
