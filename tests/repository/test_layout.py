"""tests/ mirrors src/ead/: the tests of the module ead.X.Y (src/ead/X/Y.py, or the package src/ead/X/Y/__init__.py)
are in tests/X/test_Y.py, and every folder of tests/ is a package's folder or one of the folders that hold no module's
tests: end_to_end/ (runs of the workflow, trainer or cluster), repository/ (checks of the repository as a whole),
vllm/ (the suite run inside .venv-vllm) and fixtures/ (data). Every module has its test file, or a line in
:data:`UNMIRRORED_MODULES` saying where its behaviour is tested instead; that list can only shrink."""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
PACKAGE = ROOT / "src" / "ead"

#: The folders of tests/ that mirror no module.
NOT_MIRRORED = ("end_to_end", "repository", "vllm", "fixtures")


#: Modules without a test file of their own -> where their behaviour is tested instead. A module gets a line here
#: only with a reason; one that gains its test file must leave the list (the check below says so).
UNMIRRORED_MODULES = {
    "analyses": "package docstring and the ANALYSES registry: tests/settings/test_analyses.py",
    "claims": "re-exports ead.verdicts (tests/test_verdicts.py); comparison_label in tests/claims/test_rl.py",
    "data": "package docstring only; the task registry is ead.data.tasks (tests/data/test_tasks.py)",
    "operations": "package docstring only; its modules have their tests in tests/operations/",
    "plots": "package docstring only; its modules have their tests in tests/plots/",
    "rl": "package docstring only; its modules have their tests in tests/rl/",
    "rl/verl": "the lazy verl import; its modules have their tests in tests/rl/verl/",
    "rl/trl": "package docstring only; its module has its tests in tests/rl/trl/",
    "samplers": "package docstring only; its modules have their tests in tests/samplers/",
    "rewards/__main__": "the grader's command line: tests/rewards/test_worker.py and the smoke run",
    "analyses/schedule_table": "the Fig. 3 table job: the smoke run (tests/end_to_end/test_workflow.py)",
    "models/smollm2": "the offline model from its registry wheel: the smoke and default runs (no test may download)",
    "plots/fig02_forking": "tests/plots/test_fig01_entropy_by_position.py (both sampling-analysis figures)",
    "plots/fig03_annealing_schedule": "tests/repository/test_readme_picture.py (its plot draws the README picture)",
    "plots/fig08_rollout_n_comparison": "an RL figure of its own kind: tests/plots/test_rl_figure.py",
    "plots/fig11_off_policy": "an RL figure of its own kind: tests/plots/test_rl_figure.py",
    "plots/inference_only": "tests/analyses/test_inference_only.py (the job writes its tables, the figure reads them)",
    "plots/rl_curves": "the curve panels every RL figure draws: tests/plots/test_rl_figure.py",
    "rl/verl/local": "the verl_cpu profile's local assets: tests/vllm/test_verl_cpu_trainer.py",
}


def modules(package: Path) -> set[str]:
    """The package's modules and subpackages as paths relative to it without suffix: ``schedule``, ``rl/train``,
    ``rewards`` (a package), ``rewards/grader``."""
    found = set()
    for path in package.rglob("*.py"):
        relative = path.relative_to(package).with_suffix("")
        if relative.name == "__init__":
            relative = relative.parent
        if relative.parts and relative.name != "__main__":
            found.add(relative.as_posix())
    return found


def packages(package: Path) -> set[str]:
    """The package's subpackages, as folders relative to it (``rl``, ``rl/verl``)."""
    return {path.parent.relative_to(package).as_posix() for path in package.rglob("__init__.py")} - {"."}


def misplaced_test_files(test_files: list[str], module_paths: set[str]) -> list[str]:
    """Each test file (a path relative to tests/) outside the unmirrored folders that is not at the mirrored path of a
    module, with the module path it would need."""
    problems = []
    for test_file in test_files:
        parts = Path(test_file).parts
        if parts[0] in NOT_MIRRORED:
            continue
        folder, name = Path(*parts[:-1]), parts[-1]
        module = (folder / name.removeprefix("test_").removesuffix(".py")).as_posix()
        if not name.startswith("test_") or module not in module_paths:
            problems.append(f"tests/{test_file}: no module src/ead/{module}.py or src/ead/{module}/__init__.py; a "
                            f"module's tests go to tests/<its folder>/test_<its name>.py")
    return problems


def misplaced_folders(test_folders: list[str], package_folders: set[str]) -> list[str]:
    """Each folder of tests/ (relative to it) that mirrors no package of src/ead and is not an unmirrored one."""
    return [f"tests/{folder}/: neither a package src/ead/{folder}/ nor one of {', '.join(NOT_MIRRORED)}"
            for folder in test_folders
            if folder not in package_folders and Path(folder).parts[0] not in NOT_MIRRORED]


def test_every_test_file_is_at_the_mirrored_path_of_its_module():
    test_files = sorted(path.relative_to(TESTS).as_posix() for path in TESTS.rglob("test_*.py"))
    assert misplaced_test_files(test_files, modules(PACKAGE)) == []


def mirrored_test_file(module: str) -> str:
    """Where the tests of a module path (``rl/train``, or the package ``rewards``) go, relative to tests/."""
    folder, _, name = module.rpartition("/")
    return f"{folder}/test_{name}.py" if folder else f"test_{name}.py"


def test_every_module_has_its_test_file_or_a_reason_it_has_none():
    modules_without = sorted(module for module in modules(PACKAGE) | {"rewards/__main__"}
                             if not (TESTS / mirrored_test_file(module)).exists())
    assert [module for module in modules_without if module not in UNMIRRORED_MODULES] == [], \
        "add tests/<folder>/test_<module>.py (or a line with a reason to UNMIRRORED_MODULES)"
    assert [module for module in UNMIRRORED_MODULES if module not in modules_without] == [], \
        "these modules have their test file now (or are gone): take them off UNMIRRORED_MODULES"


def test_every_folder_of_the_tests_mirrors_a_package_or_holds_no_modules_tests():
    folders = sorted(path.relative_to(TESTS).as_posix() for path in TESTS.rglob("*")
                     if path.is_dir() and path.name != "__pycache__" and "__pycache__" not in path.parts)
    assert misplaced_folders(folders, packages(PACKAGE)) == []
    missing = [folder for folder in folders
               if Path(folder).parts[0] not in ("vllm", "fixtures") and not (TESTS / folder / "__init__.py").exists()]
    assert missing == []  # test files of the same name in two folders need their folders to be packages


@pytest.mark.parametrize("test_file, module", [("test_training.py", "training"), ("rl/test_schedule.py", "rl/schedule"),
                                               ("rl/verl/test_trainer.py", "rl/verl/trainer"),
                                               ("settings/helpers.py", "settings/helpers")])
def test_the_checks_see_a_misplaced_file_and_folder(test_file, module):
    """On a fake listing: a file named after a topic, a module's tests in the wrong folder, a file not named test_*,
    and a folder that mirrors no package are named; the mirrored and unmirrored paths pass."""
    module_paths = {"schedule", "rl", "rl/train", "rl/verl", "rl/verl/run", "rewards", "rewards/grader", "settings"}
    good = ["test_schedule.py", "rl/test_train.py", "rl/verl/test_run.py", "test_rewards.py", "rewards/test_grader.py",
            "end_to_end/test_workflow.py", "repository/test_docs.py", "vllm/test_vllm_processors.py"]
    assert misplaced_test_files(good, module_paths) == []
    (problem,) = misplaced_test_files([*good, test_file], module_paths)
    assert problem.startswith(f"tests/{test_file}: no module src/ead/{module}.py")
    package_folders = {"rl", "rl/verl", "rewards", "settings"}
    assert misplaced_folders(["rl", "rl/verl", "end_to_end", "fixtures", "vllm"], package_folders) == []
    assert misplaced_folders(["rl", "integration", "rl/helpers"], package_folders) == [
        "tests/integration/: neither a package src/ead/integration/ nor one of end_to_end, repository, vllm, fixtures",
        "tests/rl/helpers/: neither a package src/ead/rl/helpers/ nor one of end_to_end, repository, vllm, fixtures"]
