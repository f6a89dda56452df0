"""The code lints clean: ruff with the project's configuration (pyproject.toml, [tool.ruff]) over the whole tree; and
the code, its settings and its tests name no issue number, work stop or path outside the repository.

The same check a reviewer runs: `.venv/bin/ruff check .`
"""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_ruff_finds_nothing():
    ruff = Path(sys.executable).parent / "ruff"
    assert ruff.exists(), f"{ruff} is missing: run `bash workflow/scripts/setup.sh --tests` (ruff is a test extra)"
    result = subprocess.run([str(ruff), "check", "--no-cache", "--output-format", "concise", "."], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-2000:]


# --- The code says what the project is, not how the work on it was organised --------------------------------------

#: How the work was organised, in the code: an issue number (with or without the word), a numbered work stop, a
#: mention of an issue as such, a path outside the repository (the shared notes). tests/repository/test_docs.py keeps
#: the same words out of the reference pages; the pattern itself is exempt (ON_PURPOSE).
ORGANISATION = re.compile(r"[Ii]ssue #?[0-9]+|#[0-9]{2}\b|\bstop [0-9]+|\.\./shared|the issue")
#: Where the code and its settings are, and the kinds of file looked at there (the docs are
#: tests/repository/test_docs.py's; benchmarks/results/ and the test fixtures are program output and data).
CODE_FOLDERS = ("src", "workflow", "tests", "benchmarks", "tools", "configs")
CODE_SUFFIXES = {".py", ".smk", ".sh", ".yaml", ".yml", ".rst"}
#: Lines that hold such words on purpose: (file, text in the line, why). An entry that excuses no line fails the test.
ON_PURPOSE = [
    ("tests/repository/test_lint.py", "ORGANISATION = re.compile(", "this check's own pattern"),
    ("tests/repository/test_docs.py", "#: How the work was organised is no part of a reference page",
     "the docs check's description of what it finds"),
    ("tests/repository/test_docs.py", "A page's own anchors, `(#runtime)`, do not match.",
     "the same description, continued"),
    ("tests/repository/test_docs.py", '"Fixed in stop', "the docs check's planted line"),
    ("tests/repository/test_docs.py", 'assert [problem.split(": ")[1] for problem in planted] ==',
     "what the docs check must report for its planted line"),
]


def code_files(root: Path) -> list[Path]:
    files = [root / "Snakefile"]
    for folder in CODE_FOLDERS:
        files += [path for path in sorted((root / folder).rglob("*"))
                  if path.is_file() and path.suffix in CODE_SUFFIXES
                  and not any(part == "__pycache__" or part.endswith(".egg-info") for part in path.parts)]
    return [path for path in files if path.exists()]


def organisation_words(root: Path) -> tuple[list[str], set[int]]:
    """``file:line: word: the line`` for every issue number, stop or outside path in the code, and the indices of the
    :data:`ON_PURPOSE` entries that excused a line."""
    problems, used = [], set()
    for path in code_files(root):
        where = path.relative_to(root).as_posix()
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            words = [match.group() for match in ORGANISATION.finditer(line)]
            excused = [index for index, (file, text, _) in enumerate(ON_PURPOSE) if file == where and text in line]
            if words and excused:
                used.update(excused)
            elif words:
                problems += [f"{where}:{number}: {word!r}: {line.strip()[:120]}" for word in words]
    return problems, used


def test_the_code_names_no_issue_stop_or_outside_path():
    problems, used = organisation_words(ROOT)
    stale = [f"{file}: {text!r} ({why})" for index, (file, text, why) in enumerate(ON_PURPOSE) if index not in used]
    assert not problems, ("say the fact about the project; no issue number, work stop or outside path:\n"
                          + "\n".join(problems))
    assert not stale, "ON_PURPOSE entries that excuse no line any more:\n" + "\n".join(stale)


def test_a_planted_issue_number_in_the_code_is_named_with_file_and_line(tmp_path):
    module = tmp_path / "src" / "ead" / "module.py"
    module.parent.mkdir(parents=True)
    words = [f"{'stop'} 41", f"{'issue'} #{12}", f"..{'/shared'}"]  # built from pieces: this file's lines stay clean
    module.write_text(f'"""A module."""\n\n# fixed in {words[0]} ({words[1]}); notes in `{words[2]}/notes.md`\n')
    problems, _ = organisation_words(tmp_path)
    assert [problem.split(": ")[1] for problem in problems] == [repr(word) for word in words], problems
    assert all(problem.startswith("src/ead/module.py:3: ") for problem in problems), problems


# --- The rule files read the config through ead.settings ---------------------------------------------------------

#: Raw config reads (`config[...]`, `config.get(...)`) the rule files may hold: none. They reach the config through
#: ead.settings (the parse-time SWITCHES of ead.settings.switches, the sections' resolvers, ead.settings.arguments), so
#: what a key means and its default are written once, beside the section it belongs to.
CONFIG_READ_BUDGET = 0
RAW_CONFIG_READ = re.compile(r"(?<![\w.])config(?:\[|\.get\()")


def raw_config_reads(root: Path) -> dict[str, int]:
    """Raw config reads per rule file (workflow/**/*.smk and the Snakefile), those that hold any."""
    files = [root / "Snakefile", *sorted((root / "workflow").rglob("*.smk"))]
    counts = {path.relative_to(root).as_posix(): len(RAW_CONFIG_READ.findall(path.read_text()))
              for path in files if path.exists()}
    return {name: count for name, count in counts.items() if count}


def test_the_config_read_check_sees_both_spellings(tmp_path):
    (tmp_path / "workflow").mkdir()
    (tmp_path / "Snakefile").write_text('if config.get("x"):\n    y = config["y"]\nz = SWITCHES.profile  # config\n')
    (tmp_path / "workflow" / "a.smk").write_text('LAYERED.config["x"]\nsettings(config)\n')
    assert raw_config_reads(tmp_path) == {"Snakefile": 2}


def test_the_rule_files_read_the_config_through_ead_settings():
    reads = raw_config_reads(ROOT)
    assert sum(reads.values()) <= CONFIG_READ_BUDGET, (
        f"{sum(reads.values())} raw config[...] reads in the rule files, above {CONFIG_READ_BUDGET}; read them through "
        "ead.settings (a resolver or ead.settings.arguments) instead: "
        + ", ".join(f"{name}: {count}" for name, count in sorted(reads.items(), key=lambda item: -item[1])))
