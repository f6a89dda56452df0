# Paper Figure 3: the EAD annealing schedule for several decay rates d (and, with `measured_schedule`, each policy's
# schedule sized from measurement next to the hand-sized one).


rule schedule_table:
    output:
        table="results/schedule/schedule_table.csv",
    params:
        args=schedule_table_args(config),
    log:
        "results/logs/schedule/schedule_table.log",
    conda:
        CONDA_ENV
    shell:
        "python -m ead.analyses.schedule_table {params.args} --out {output.table} > {log} 2>&1"


rule fig03_annealing_schedule:
    input:
        table=rules.schedule_table.output.table,
        measured=get_measured_schedule_tables(),
        code=plot_code("fig03_annealing_schedule"),
    output:
        **figure_outputs("fig03_annealing_schedule"),
    log:
        "results/logs/figures/fig03_annealing_schedule.log",
    conda:
        CONDA_ENV
    shell:
        "python -m ead.plots.fig03_annealing_schedule --table {input.table} --measured {input.measured}"
        " --png {output.png} --pdf {output.pdf} > {log} 2>&1"
