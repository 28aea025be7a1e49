"""promptfoo's formats, read as promptfoo reads them: YAML 1.2 (`yaml12`), JavaScript's values
(`js`), `file://` references and globs (`files`), providers, chat prompts (`chat`), nunjucks
templates (`nunjucks`) and assertions (`assertions`, `assertion_values`). Pure reading;
`gate.inputs.promptfoo_suite` reads whole configs and makes the gate's suites and cases."""
