"""promptfoo, in one place: its configs read as promptfoo reads them, its assertions run with
promptfoo's semantics, its prompts rendered and its providers called as promptfoo does.

The package is one home that spans stages: each part sits at the stage it serves, and the
import-linter contracts (`pyproject.toml`, docs/layout.md) hold it there: `inputs` (reading,
pure), `systems` (a prompt and a provider as the system under test), `checks` (assertions).
The rest of the gate imports only the face below; everything else here is promptfoo's own
(a `protected` contract keeps it so).

The face:

- `inputs.suites`: `expand_suites` (gate.yml's `promptfoo:` suites as ordinary suites, one
  per prompt and provider), `suite_cases` (a suite's cases: the config's tests),
  `referenced_files` (what a config reads, for change detection), `config_pairs` (what
  `gate init` reports).
- `inputs.files`: `Files`, `Checkout` (where configs are read: a checkout or a commit).
- `inputs.assertions`: `Assertion`, `AssertionSet` (a case's assertions, data).
- `inputs.csv_tests`: `csv_records` (CSV case files: promptfoo's CSV test rows, with the
  gate's case columns; `RowTest.assertions`).
- `inputs.nunjucks`: `NUNJUCKS_FILTERS`, `unknown_filter` (the gate's own prompts are
  nunjucks templates too).
- `checks`: `run_assertions`, `grader_config`.
- `systems`: `PromptfooChatSystem` (gate.yml's `kind: promptfoo`), `prompt_renderer`.
"""
