"""A promptfoo config as the gate's suites and cases: the config with its `$ref`s (`config`),
its prompts, its tests and their cases, and gate.yml's `promptfoo:` suites (`suites`)."""
