"""Config files (ead.settings.files): a YAML error or a key given twice names the file and line."""

import re
from pathlib import Path

import pytest
import yaml

from ead.settings import ConfigError

ROOT = Path(__file__).resolve().parents[2]


def test_a_yaml_syntax_error_in_a_config_file_names_the_file_and_line(tmp_path):
    """Snakemake's own message ("Config file is not valid JSON or YAML") names neither."""
    from ead.settings.files import main, read_config_file

    broken = tmp_path / "overlay.yaml"
    broken.write_text("rl:\n  steps: 4\n  eval: {k: [1, 2}\n")
    with pytest.raises(ConfigError, match=rf"{re.escape(str(broken))}:3:\d+: YAML syntax error"):
        read_config_file(broken)
    not_a_mapping = tmp_path / "list.yaml"
    not_a_mapping.write_text("- 1\n- 2\n")
    with pytest.raises(ConfigError, match=rf"{re.escape(str(not_a_mapping))}: must hold a mapping"):
        read_config_file(not_a_mapping)
    smoke = ROOT / "configs" / "smoke.yaml"
    assert read_config_file(smoke) == yaml.safe_load(smoke.read_text())
    assert main([str(ROOT / "configs" / "smoke.yaml")]) == 0
    assert main([str(ROOT / "configs" / "smoke.yaml"), str(broken)]) == 1


@pytest.mark.parametrize(("text", "message"), [
    ("ead:\n  tau_max: 1.2\nrl:\n  steps: 4\nead:\n  c: 10\n", r":5:1: key 'ead' is given twice \(first at line 1\)"),
    ("rl: {steps: 4, steps: 8}\n", r":1:16: key 'steps' is given twice \(first at line 1\)"),
])
def test_a_key_given_twice_in_one_file_is_refused_naming_file_and_line(tmp_path, text, message):
    """YAML keeps the last of two equal keys silently: a second ``ead:`` block would replace the first."""
    from ead.settings.files import read_config_file

    overlay = tmp_path / "twice.yaml"
    overlay.write_text(text)
    with pytest.raises(ConfigError, match=re.escape(str(overlay)) + message):
        read_config_file(overlay)


@pytest.mark.parametrize("text", ["\n", "# nothing set yet\n", "{}\n", "--- {}\n"])
def test_an_overlay_that_sets_no_key_is_refused_naming_the_file(tmp_path, text):
    """An empty file and an empty mapping both change nothing: most likely an overlay whose keys were lost, so the
    printer and the workflow refuse both, naming the file, rather than run the profile below it unchanged."""
    from ead.settings.files import read_config_file
    from ead.workflow import main

    overlay = tmp_path / "overlay.yaml"
    overlay.write_text(text)
    with pytest.raises(ConfigError, match=re.escape(str(overlay)) + r": (is empty|holds an empty mapping)"):
        read_config_file(overlay)
    assert main(["--configfile", "configs/smoke.yaml", str(overlay)]) == 1
