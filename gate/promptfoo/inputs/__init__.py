"""promptfoo at the inputs stage, pure reading. Its formats as promptfoo reads them: YAML 1.2
(`yaml12`), JavaScript's values (`js`), `file://` references and globs (`files`), providers,
chat prompts (`chat`), nunjucks templates (`nunjucks`), assertions (`assertions`: the data and
promptfoo's string syntax; `assertion_values`: a mapping's value checked as its handler would)
and CSV rows (`csv_tests`). A whole config (`config`: its `$ref`s and `env`), its prompts
(`prompts`), its tests (`tests`) as the gate's cases (`cases`), and gate.yml's `promptfoo:`
suites (`suites`)."""
