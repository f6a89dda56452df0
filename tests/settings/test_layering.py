"""Profiles, overlays, `include:`, `key+:` and `--config` (ead.settings.layering): what merges, what replaces,
what is refused, and which file set each value."""

import re
from pathlib import Path

import pytest
import yaml

from ead.settings import ConfigError, layer_config, load_layered_config, validate_config
from ead.settings.layering import restated_keys
from tests.conftest import SCHEMA, load

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("profile", ["smoke.yaml", "paper.yaml", "full.yaml"])
def test_profiles_state_only_what_differs_from_the_default(profile):
    base = yaml.safe_load((ROOT / "configs" / "config.yaml").read_text())
    delta = yaml.safe_load((ROOT / "configs" / profile).read_text())
    assert restated_keys(base, delta) == []
    assert restated_keys({"a": {"b": 1, "c": [1]}}, {"a": {"b": 2, "c": [1]}, "d": 3}) == ["a.c"]


def test_layering_merges_mappings_and_replaces_everything_else(tmp_path):
    (tmp_path / "base.yaml").write_text("a: {b: 1, c: [1, 2], d: {e: 1}}\nlist: [1, 2]\nx: {y: 1}\n")
    (tmp_path / "delta.yaml").write_text("a: {c: [3], d: {f: 2}}\nlist: [9]\nx: 5\nnew: {k: v}\n")
    layered = layer_config(tmp_path / "base.yaml", tmp_path / "delta.yaml").config
    assert layered == {"a": {"b": 1, "c": [3], "d": {"e": 1, "f": 2}}, "list": [9], "x": 5, "new": {"k": "v"},
                       "claims": []}


def test_layering_includes_extends_lists_and_remembers_each_values_file(tmp_path):
    """include: layers a shared file first; key+: extends a list; every leaf knows the file that set it last."""
    from ead.settings import layer_config

    (tmp_path / "layers").mkdir()
    (tmp_path / "base.yaml").write_text("a: {b: 1, c: [1, 2]}\nclaims: [{id: C1}]\n")
    (tmp_path / "layers" / "shared.yaml").write_text("a: {b: 2}\n")
    (tmp_path / "profile.yaml").write_text("include: [layers/shared.yaml]\na: {c+: [3]}\nclaims+: [{id: C2}]\n")
    layered = layer_config(tmp_path / "base.yaml", tmp_path / "profile.yaml")
    assert layered.config == {"a": {"b": 2, "c": [1, 2, 3]}, "claims": [{"id": "C1"}, {"id": "C2"}]}
    assert layered.source_of("a.b").endswith("layers/shared.yaml")
    assert layered.source_of("a.c").endswith("profile.yaml") and layered.source_of("claims[1]").endswith("profile.yaml")
    assert layered.name_source("a.b = 2: bad").endswith("shared.yaml: a.b = 2: bad")
    (tmp_path / "loop.yaml").write_text("include: [loop.yaml]\n")
    with pytest.raises(ConfigError, match=r"loop\.yaml: includes itself"):
        layer_config(tmp_path / "base.yaml", tmp_path / "loop.yaml")
    (tmp_path / "bad.yaml").write_text("a: {b+: [3]}\n")
    with pytest.raises(ConfigError, match=r"bad\.yaml: a\.b\+ = \[3\]: `b\+` appends to a list, but a\.b is not a "
                                          r"list \(it is 1\); to replace it, write `b:` without the `\+`"):
        layer_config(tmp_path / "base.yaml", tmp_path / "bad.yaml")
    (tmp_path / "scalar.yaml").write_text("a: {c+: 3}\n")
    with pytest.raises(ConfigError, match=r"scalar\.yaml: a\.c\+ = 3: `c\+` appends the items of a list to a\.c; "
                                          r"write them as a list \(e\.g\. `c\+: \[3\]`\)"):
        layer_config(tmp_path / "base.yaml", tmp_path / "scalar.yaml")


def test_a_list_replaced_and_extended_in_one_file_is_refused_in_either_order(tmp_path):
    from ead.settings import layer_config

    for text in ("claims+: [{id: X2}]\nclaims: [{id: X3}]\n", "claims: [{id: X3}]\nclaims+: [{id: X2}]\n",
                 "premises: {samplers: [ead], samplers+: [tau1.2]}\n"):
        overlay = tmp_path / "both.yaml"
        overlay.write_text(text)
        with pytest.raises(ConfigError, match=rf"^{re.escape(str(overlay))}: (claims|premises\.samplers) and "
                                              r"\1\+ are both given"):
            layer_config(ROOT / "configs" / "config.yaml", overlay)


def test_a_file_included_twice_is_layered_once_where_first_reached(tmp_path):
    """An overlay including layers/verl.yaml over verl_cpu.yaml (built on it) keeps the CPU profile's values; a
    diamond (two includes sharing a layer) layers the shared file once."""
    from ead.settings import layer_config

    overlay = tmp_path / "gpu_layer.yaml"
    overlay.write_text(f"include: [{ROOT / 'configs' / 'layers' / 'verl.yaml'}]\nrl: {{steps: 3}}\n")
    plain = layer_config(ROOT / "configs" / "config.yaml", ROOT / "configs" / "verl_cpu.yaml")
    layered = layer_config(ROOT / "configs" / "config.yaml", ROOT / "configs" / "verl_cpu.yaml", overlay)
    assert layered.config["rl"]["verl"] == plain.config["rl"]["verl"]
    assert layered.config["rl"]["verl"]["device"] == "cpu" and layered.config["rl"]["steps"] == 3
    assert layered.files.count("configs/layers/verl.yaml") == 1
    (tmp_path / "shared.yaml").write_text("ead: {tau_max: 1.1}\n")
    (tmp_path / "left.yaml").write_text("include: [shared.yaml]\nrl: {steps: 5}\n")
    (tmp_path / "right.yaml").write_text("include: [shared.yaml]\nead: {tau_max: 1.3}\n")
    (tmp_path / "top.yaml").write_text("include: [left.yaml, right.yaml]\nprofile: diamond\n")
    layered = layer_config(ROOT / "configs" / "config.yaml", tmp_path / "top.yaml")
    validate_config(layered.config, SCHEMA)
    assert [Path(name).name for name in layered.files] == ["config.yaml", "shared.yaml", "left.yaml", "right.yaml",
                                                           "top.yaml"]
    assert layered.config["ead"]["tau_max"] == 1.3 and layered.source_of("ead.tau_max").endswith("right.yaml")


def test_command_line_overrides_restore_yaml_types_and_nest_dunder_keys():
    from ead.settings.layering import command_line_overrides

    # what Snakemake's --config parser hands over: nested scalars as strings (YAML BaseLoader), top-level ones typed
    raw = {"ead": {"tau_max": "1.5", "warmup": "3"}, "rl__eval__k": "[1, 8]", "rl__steps": 4, "profile": "x",
           "grader": {"last_boxed_only": "true"}}
    assert command_line_overrides(raw) == {"ead": {"tau_max": 1.5, "warmup": 3},
                                           "rl": {"eval": {"k": [1, 8]}, "steps": 4},
                                           "profile": "x", "grader": {"last_boxed_only": True}}


def test_command_line_overrides_merge_into_the_config_key_by_key():
    from ead.settings.layering import command_line_overrides

    before = load("config.yaml")["ead"]
    config = load_layered_config(ROOT / "configs" / "config.yaml", command_line=command_line_overrides(
        {"ead": {"tau_max": "1.5"}, "ead__tau_min": 0.2}))
    assert config["ead"] == {**before, "tau_max": 1.5, "tau_min": 0.2}
    validate_config(config, SCHEMA)


def test_an_empty_mapping_in_an_overlay_is_an_error_naming_the_key(tmp_path):
    (tmp_path / "x.yaml").write_text("rl: {experiments: {}}\n")
    with pytest.raises(ConfigError, match=r"x\.yaml: rl\.experiments = \{\} cannot take effect"):
        load_layered_config(ROOT / "configs" / "config.yaml", ROOT / "configs" / "smoke.yaml", tmp_path / "x.yaml")
    with pytest.raises(ConfigError, match=r"--config: rl\.experiments\.main = \{\} cannot take effect"):
        load_layered_config(ROOT / "configs" / "config.yaml", command_line={"rl": {"experiments": {"main": {}}}})
    (tmp_path / "new.yaml").write_text("new: {}\n")
    layer_config(ROOT / "configs" / "config.yaml", tmp_path / "new.yaml")  # layering takes a new key's {}


def test_a_repeated_configfile_flag_is_an_error():
    from ead.settings.layering import check_configfile_flags

    check_configfile_flags(["snakemake", "--configfile", "a.yaml", "b.yaml", "--cores", "all"])
    with pytest.raises(ConfigError, match="--configfile given 2 times"):
        check_configfile_flags(["snakemake", "--configfile", "a.yaml", "--configfile", "b.yaml"])


@pytest.mark.parametrize("argv", [
    ["--configfile=configs/smoke.yaml", "--configfile=configs/ablations/decay_scale_20.yaml"],
    ["--configfile=configs/smoke.yaml", "--configfile", "configs/ablations/decay_scale_20.yaml"],
    ["--configfiles", "a.yaml", "--configfile=b.yaml"],
    ["--configfiles=a.yaml", "--configfiles=b.yaml"],
    ["--configf", "a.yaml", "--configfile", "b.yaml"],  # argparse accepts a unique prefix
])
def test_every_spelling_of_the_configfile_flag_is_counted(argv):
    """`--configfile=F` used to pass uncounted, so Snakemake silently dropped the first overlay."""
    from ead.settings.layering import check_configfile_flags

    with pytest.raises(ConfigError, match="--configfile given 2 times"):
        check_configfile_flags(["snakemake", "-n", *argv])


def test_one_configfile_flag_in_any_spelling_passes():
    from ead.settings.layering import check_configfile_flags

    for argv in (["--configfile=a.yaml"], ["--configfiles", "a.yaml", "b.yaml"], ["--config", "x=1", "--configf=a"],
                 ["--config=a=1", "--configfile", "a.yaml"]):
        check_configfile_flags(["snakemake", *argv])
