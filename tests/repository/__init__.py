"""Checks of the repository as a whole: ruff, the docs' references, the layers of the package, the tests' layout, the
jobs' defaults against the config, the workflow profiles, the use-ead page's blocks and pins, the stop-jobs script, and
the bf16 bound the verl tests rely on."""
