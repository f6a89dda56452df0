# Input functions of the schedule sized from measurement (config `measured_schedule`,
# configs/ablations/measured_schedule.yaml): its tables, which Fig. 3 draws and `measured: true` RL cells read.


def get_measured_schedule_tables():
    """results/schedule/measured_<policy>.csv of every policy of `measured_schedule` (none without that key)."""
    return [f"results/schedule/measured_{policy}.csv" for policy in SWITCHES.measured_schedule_policies]


