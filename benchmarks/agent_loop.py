"""The tool loop's overhead per step, against the model server's own time.

A support agent (the model server's scripted `agent_model`: a plan of tool calls in its system
prompt) answers cases whose turn takes K model calls: K-1 tool calls, each result sent back,
then the answer. The gate's chat system runs the loop in-process, one case after another, so
the wall time is the server's time plus the gate's: rendering the prompt, building each
request (the whole conversation so far), hashing it for the cache, writing the answer to the
cache, parsing the reply, finding each call's result in the case, and the HTTP round trip.
Printed per vendor and K: the server's own time per step (from the request read to the
answer written, `ModelServer.busy_s`), the gate's overhead per step (wall minus server, over
the steps), the part of it a bare HTTP client pays too (`requests` posting the same bodies on
one keep-alive connection, minus the server's time), and the time per step of a rerun
answered wholly by the response cache (no call).

Usage: python benchmarks/agent_loop.py [--cases 40] [--latency 0.0] [--steps 1 4 10 20]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import requests
import yaml

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))  # for helpers

from helpers.servers.model_server import ModelServer, agent_model  # noqa: E402

from gate.inputs.cases import parse_case  # noqa: E402
from gate.inputs.config import AnthropicSystem, OpenAISystem  # noqa: E402
from gate.systems import SystemEnv, SystemRequest, build_system  # noqa: E402

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "lookup_order",
            "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
        },
    }
]


def write_project(root: Path, steps: int) -> None:
    plan = 'PLAN 1: lookup_order {"order_id": "{{ order }}"}\n' * (steps - 1)
    (root / "agent.md").write_text(f"You are a support agent.\n{plan}SAY 1: Done ($RESULTS).\n")
    (root / "ask.j2").write_text("{{ question }}")
    config = {"model": "bench-agent", "max_tokens": 100, "system": "agent.md", "tools": TOOLS}
    (root / "model.yaml").write_text(yaml.safe_dump(config))


def cases(n: int, steps: int) -> list[Any]:
    found = []
    for i in range(n):
        record = {
            "id": f"c{i}",
            "input": {"question": f"Where is order {i}?", "order": f"O{i}"},
            "tools": {"lookup_order": {"returns": {"status": "shipped", "order": i}}},
            "max_steps": steps,
        }
        found.append(parse_case(record, file=Path("b.jsonl"), display="b.jsonl", line=i + 1))
    return found


def run(system: Any, found: list[Any]) -> float:
    started = time.perf_counter()
    for case in found:
        request = SystemRequest(case_id=case.id, input=case.system_input(), agent=case.agent)
        output = system.call(request)
        assert output.finish_reason != "max_steps", output
    return time.perf_counter() - started


def bare_client(server: ModelServer, bodies: list[tuple[str, Any]]) -> float:
    """Milliseconds a bare client spends per request beside the server's own time."""
    with requests.Session() as session:
        session.post(server.url + bodies[0][0], json=bodies[0][1], timeout=30)
        busy = server.busy_s
        started = time.perf_counter()
        for path, body in bodies:
            session.post(server.url + path, json=body, timeout=30).raise_for_status()
        wall = time.perf_counter() - started
    return 1000 * (wall - (server.busy_s - busy)) / len(bodies)


def measure(server: ModelServer, kind: str, steps: int, n: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        write_project(root, steps)
        base = server.openai_base_url if kind == "openai" else server.url
        keys = {"model_config": "model.yaml", "prompt": "ask.j2", "base_url": base}
        config = (
            OpenAISystem(kind="openai", **keys)
            if kind == "openai"
            else AnthropicSystem(kind="anthropic", **keys)
        )
        env = SystemEnv(
            root=root,
            config_dir=root,
            environ={"OPENAI_API_KEY": "x", "ANTHROPIC_API_KEY": "x"},
            cache_dir=root / "cache",
            concurrency=1,
        )
        system = build_system(config, env)
        found = cases(n, steps)
        run(system, found[:2])  # warm the connection and the imports
        busy, before = server.busy_s, server.requests
        logged = len(server.log)
        wall = run(system, found[2:])
        served = server.busy_s - busy
        made = server.requests - before
        bodies = [(e.path, e.body) for e in server.log[logged:]]
        cached = run(system, found[2:])
        assert server.requests - before == made, "a rerun must cost no call"
        system.close()
    total = (n - 2) * steps
    assert made == total, (made, total)
    return {
        "server_ms": 1000 * served / total,
        "overhead_ms": 1000 * (wall - served) / total,
        "http_ms": bare_client(server, bodies),
        "cached_ms": 1000 * cached / total,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=40)
    parser.add_argument("--latency", type=float, default=0.0, help="the server's seconds a call")
    parser.add_argument("--steps", type=int, nargs="+", default=[1, 4, 10, 20])
    parser.add_argument("--rounds", type=int, default=5, help="runs of each row (medians shown)")
    args = parser.parse_args()
    rows = []
    with ModelServer(responder=agent_model, latency_s=args.latency) as server:
        for kind in ("openai", "anthropic"):
            for steps in args.steps:
                runs = [measure(server, kind, steps, args.cases) for _ in range(args.rounds)]
                medians = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
                rows.append({"vendor": kind, "steps": steps, **medians})
                server.log.clear()
    print(
        f"{args.cases - 2} cases a row, one after another, medians of {args.rounds} runs; "
        f"server latency {args.latency * 1000:g} ms"
    )
    print(f"{'vendor':<10} {'model calls':>11} {'server ms/step':>15} {'gate ms/step':>13} "
          f"{'of it bare HTTP':>16} {'cached ms/step':>15}")  # fmt: skip
    for r in rows:
        print(
            f"{r['vendor']:<10} {r['steps']:>11} {r['server_ms']:>15.2f} {r['overhead_ms']:>13.2f} "
            f"{r['http_ms']:>16.2f} {r['cached_ms']:>15.2f}"
        )
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
