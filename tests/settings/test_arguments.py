"""Every rule's job arguments (ead.settings.arguments): the rerun command names the run's config files and
overrides."""



def test_the_rerun_command_names_the_runs_config_files_and_overrides():
    from ead.settings.arguments import rerun_command

    assert rerun_command([], {}) == "snakemake --cores all"
    assert (rerun_command(["configs/smoke.yaml", "configs/ablations/decay_scale_20.yaml"], {"profile": "decay20"})
            == "snakemake --cores all --configfile configs/smoke.yaml configs/ablations/decay_scale_20.yaml"
               " --config profile=decay20")
    assert rerun_command([], {"ead": {"tau_max": 1.5}}) == "snakemake --cores all --config 'ead={\"tau_max\": 1.5}'"
