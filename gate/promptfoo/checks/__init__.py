"""promptfoo at the checks stage: a case's assertions run with promptfoo's semantics
(`assertions`: its `runAssertions`, scores, weights, thresholds, assert-sets), its deterministic
types (`assertion_types`), what a `python` assertion returned (`script_results`) and
`llm-rubric` graded by the gate's judge (`grading`). Pure, but for the judge and the sandbox
they get through `CheckContext`.

The face: `run_assertions` (the gate's check plan runs a case's assertions with it) and
`grader_config` (an `llm-rubric` grading provider as the gate's judge)."""

from gate.promptfoo.checks.assertions import grader_config, run_assertions

__all__ = ["grader_config", "run_assertions"]
