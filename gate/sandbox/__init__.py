"""Sandboxed execution of generated code (`must_compile`, `hidden_tests`, `test_code`).

`open_sandbox(config, root)` is the entry point. The zygote side imports only the standard
library, so the exports are resolved lazily: importing `gate.sandbox.zygote` must not pull in
pydantic (tests/test_sandbox_layout.py checks that).

Where each file runs:

    host/                 in the gate's process
      sandbox.py          `Sandbox` and `open_sandbox`: jobs in, check results out
      zygote_process.py   one zygote process: start, handshake, send jobs, match answers
      folders.py          the private pythonpath copy; owner files and sweeping stale folders
      verdict.py          evidence frames and the outcome -> named check results (pure)
      protections.py      the report's account of the active protections (pure)
    protocol/             imported by both sides (standard library only, but `messages`)
      framing.py          length-prefixed JSON: how every message travels
      boot.py             `ZygoteSetup`, the zygote's first message: limits, prelude, folders
      messages.py         pydantic shapes of the messages, validated where they enter the gate
      environment.py      the one environment every job sees (`JOB_ENVIRONMENT`)
      plain.py            plain data in JSON without losing tuples, int keys or NaN
    zygote/               in the zygote, its fork server and the jobs (standard library only)
      main.py             the zygote's entry point: boot (isolate, preload, snapshot), then serve
      supervisor.py       the zygote's event loop: jobs to the fork server, outcomes to the gate
      forkserver.py       the fork server: forks every job's child
      job.py              the job's child entry point, and the zygote's view of a running job
      isolate.py          namespaces, rlimits, uid, environment: what this machine allows
      fsview.py           the minimal read-only filesystem view (mounts, pivot_root)
      linux.py            system calls `os` lacks (ctypes): unshare, mount, setns, prctl
      harness.py          in the job's child: runs the candidate and the tests, writes evidence
      sdk.py              in the job's child: the side's pythonpath and prelude, under the hook
      rewrite.py          the test code rewritten to compare through `safe_compare`
      safe_compare.py     comparisons, truth tests and plain copies candidate code cannot rig
      guard.py            the audit hook and the lock-down of the interpreter
      tamper.py           snapshots of builtins, modules and the SDK; what changed since
      private.py          private copies of the harness modules, out of the candidate's reach
"""

from __future__ import annotations

from typing import Any

__all__ = ["Sandbox", "open_sandbox"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from gate.sandbox.host import sandbox

        return getattr(sandbox, name)
    raise AttributeError(f"module 'gate.sandbox' has no attribute {name!r}")
