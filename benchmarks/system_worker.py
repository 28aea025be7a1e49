"""What the system's worker process costs: a `python` system's calls, in the gate's process
(the function called directly, as before the worker) and through the worker (one persistent
process, calls and answers over pipes), one call at a time and from `--concurrency` threads.
Prints the worker's start and the time per call of each.

    python benchmarks/system_worker.py [--calls 2000] [--concurrency 8]
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from gate.inputs.config import PythonSystem
from gate.systems import SystemEnv, SystemRequest, build_system

APP = """
def answer(inputs):
    return {"text": "echo " + inputs["question"], "usage": {"prompt_tokens": 9}}
"""


def per_call_us(call, calls: int, concurrency: int) -> float:  # type: ignore[no-untyped-def]
    requests = [
        SystemRequest(case_id=f"c{i}", input={"id": f"c{i}", "question": f"q {i} " * 20})
        for i in range(calls)
    ]
    started = time.perf_counter()
    if concurrency == 1:
        for request in requests:
            call(request)
    else:
        with ThreadPoolExecutor(concurrency) as pool:
            list(pool.map(call, requests))
    return (time.perf_counter() - started) / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="gate-bench-"))
    root.chmod(0o755)
    (root / "bench_app.py").write_text(APP)
    sys.path.insert(0, str(root))
    direct = importlib.import_module("bench_app").answer
    env = SystemEnv(root=root, config_dir=root, environ=dict(os.environ))
    env.concurrency = args.concurrency
    started = time.perf_counter()
    system = build_system(PythonSystem(kind="python", target="bench_app:answer"), env)
    start_ms = (time.perf_counter() - started) * 1e3
    print(f"worker start (import included): {start_ms:.1f} ms")
    try:
        for threads in (1, args.concurrency):
            inside = per_call_us(lambda r: direct(dict(r.input)), args.calls, threads)
            worker = per_call_us(system.call, args.calls, threads)
            print(
                f"{threads} thread(s): in the gate's process {inside:.1f} µs/call, "
                f"worker {worker:.1f} µs/call (+{worker - inside:.1f} µs)"
            )
    finally:
        system.close()


if __name__ == "__main__":
    main()
