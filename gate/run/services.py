"""What a side's runner opens once: the system under test (or recorded answers), and the
sandbox, the team's checks and the judge when a case needs them; or, for an inspect or pytest
suite, its framework."""

from __future__ import annotations

from contextlib import ExitStack

from gate.checks import CheckContext
from gate.errors import InputError
from gate.frameworks import FrameworkSide
from gate.inputs.cases import Case
from gate.inputs.config import JudgeConfig
from gate.run.spec import SideSpec
from gate.systems import SystemEnv, build_system
from gate.systems.base import System


def open_system(stack: ExitStack, spec: SideSpec, env: SystemEnv) -> System:
    """The side's own system, or the recording it answers from; recording its answers when
    the spec asks."""
    system: System
    if spec.answers is not None:
        from gate.systems.replay import RecordedAnswers

        system = RecordedAnswers(spec.answers, env)
    else:
        system = build_system(spec.own.system, env)
    stack.callback(system.close)
    if spec.record is not None:
        from gate.systems.record import RecordingSystem

        system = RecordingSystem(system, spec.record)
        stack.callback(system.close)
    return system


def open_framework(stack: ExitStack, spec: SideSpec, env: SystemEnv) -> FrameworkSide:
    """An inspect or pytest suite's side: the side's checkout measured by the instrument's
    files of the checks root (the base's, in the PR flow), the side's own model."""
    assert spec.measure.framework is not None
    if spec.record is not None or spec.answers is not None:
        key = "--record" if spec.record is not None else "answers"
        raise InputError("inspect and pytest suites cannot record or replay answers", key=key)
    side = FrameworkSide(
        spec.measure.framework, spec.own.system, env.root, spec.measure.checks_root, env.environ
    )
    return stack.enter_context(side)


def open_checks(
    stack: ExitStack, spec: SideSpec, cases: list[Case], env: SystemEnv
) -> CheckContext:
    """The sandbox of code checks (the measuring limits, the side's SDK), the sandbox of the
    team's own checks (the measuring limits and SDK, the checking checkout's modules, no
    prelude) and the judges, each only when a case needs it."""
    ctx = CheckContext()
    if any(c.expect.has_code_checks for c in cases):
        from gate.sandbox import open_sandbox

        ctx.sandbox = stack.enter_context(open_sandbox(spec.sandbox, env.root))
    targets = sorted({t for c in cases for t in c.python_targets})
    if targets:
        from gate.sandbox import open_sandbox

        sources = {
            k: v for c in cases if c.assertions for k, v in c.assertions.python_sources.items()
        }
        limits = spec.measure.sandbox.model_copy(update={"prelude": ""})
        modules = [target.partition(":")[0] for target in targets]
        checks = open_sandbox(limits, spec.measure.checks_root, modules, sources)
        ctx.python = stack.enter_context(checks)
    open_judges(stack, ctx, spec.measure.judge, cases, env)
    return ctx


def open_judges(
    stack: ExitStack,
    ctx: CheckContext,
    judge: JudgeConfig | None,
    cases: list[Case],
    env: SystemEnv,
) -> None:
    """gate.yml's judge when a case asks it, and each `llm-rubric` grader the cases name."""
    graded = [a for c in cases for a in c.graded]
    asked = any(c.expect.rubric for c in cases) or any(a.grader is None for a in graded)
    if not (asked or graded):
        return
    from gate.checks.judge import open_judge
    from gate.promptfoo.checks import grader_config

    if judge is not None and asked:
        ctx.judge = stack.enter_context(open_judge(judge, env))
    for assertion in graded:
        grader = assertion.grader
        if grader is not None and grader.key not in ctx.graders:
            opened = open_judge(grader_config(grader), env, role=f"grader {grader.model}")
            ctx.graders[grader.key] = stack.enter_context(opened)
