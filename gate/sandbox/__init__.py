"""Sandboxed execution of generated code (`must_compile`, `hidden_tests`, `test_code`).

`open_sandbox(settings, root)` is the entry point (see `gate.sandbox.service`). The zygote side
(`zygote`, `job`, `isolate`, `harness`, ...) imports only the standard library, so exports
are resolved lazily: importing `gate.sandbox.zygote` must not pull in pydantic.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Sandbox", "open_sandbox"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from gate.sandbox import service

        return getattr(service, name)
    raise AttributeError(f"module 'gate.sandbox' has no attribute {name!r}")
