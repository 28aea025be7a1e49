"""promptfoo's verdicts vs the gate's, on the same promptfoo configs against the same server.

Runs `promptfoo eval` and `gate run` (real subprocesses, caches off) on each config of
tests/helpers/promptfoo_suites.py (every supported assertion type on passing and failing
answers, defaultTest, `$ref`, env, vars and tests from files, CSV, JSONL and JSON tests, a
prompt × provider matrix with filters, YAML's values, tool calls, llm-rubric) against the
test model server, pairs each of promptfoo's results (test × prompt × provider) with the
gate's case of that test in that pair's suite, and prints the share of results with the same
verdict (pass, or not), per config and overall, with every disagreement. Target: 100%.

The gate's verdicts are also checked against what each test says it should come to
(`metadata.expect`), so a disagreement says which side is wrong.

promptfoo is looked up in $PROMPTFOO_BIN, then /work/tools/promptfoo/node_modules/.bin/promptfoo,
then /tmp/promptfoo/node_modules/.bin/promptfoo, then PATH; without it the benchmark says so
and stops. It runs offline (telemetry, updates and sharing off, no proxy reachable).

Usage: python benchmarks/promptfoo_parity.py [--suite NAME ...] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))  # for helpers

from helpers.promptfoo_suites import SUITES, say_model, write_suite  # noqa: E402
from helpers.servers.model_server import ModelServer  # noqa: E402

from gate.inputs.config import load_config  # noqa: E402
from gate.promptfoo.inputs.cases import promptfoo_cases  # noqa: E402
from gate.promptfoo.inputs.config import read_promptfoo  # noqa: E402
from gate.promptfoo.inputs.files import DiskFiles  # noqa: E402

CANDIDATES = (
    Path("/work/tools/promptfoo/node_modules/.bin/promptfoo"),
    Path("/tmp/promptfoo/node_modules/.bin/promptfoo"),
)
OFFLINE = {
    "PROMPTFOO_DISABLE_TELEMETRY": "1",
    "PROMPTFOO_DISABLE_UPDATE": "1",
    "PROMPTFOO_DISABLE_SHARING": "1",
    "HTTPS_PROXY": "http://127.0.0.1:9",
    "NO_PROXY": "127.0.0.1,localhost",
}


def promptfoo_bin() -> Path | None:
    given = os.environ.get("PROMPTFOO_BIN")
    if given:
        return Path(given)
    found = next((c for c in CANDIDATES if c.exists()), None)
    which = shutil.which("promptfoo")
    return found or (Path(which) if which else None)


def run_promptfoo(binary: Path, root: Path, env: dict[str, str]) -> dict[str, Any]:
    environ = {
        **env,
        **OFFLINE,
        "PATH": f"{binary.parent}:{env.get('PATH', '')}",
        "PROMPTFOO_CONFIG_DIR": str(root / ".promptfoo"),
        "HOME": str(root / ".home"),
    }
    done = subprocess.run(
        [str(binary), "eval", "-c", "promptfooconfig.yaml", "--no-cache", "--no-write",
         "--no-table", "--no-progress-bar", "-o", "pf.json"],
        cwd=root, env=environ, capture_output=True, text=True, check=False, timeout=600,
    )  # fmt: skip
    out = root / "pf.json"
    if not out.is_file():
        raise SystemExit(f"promptfoo wrote no results in {root}:\n{done.stdout}\n{done.stderr}")
    results: dict[str, Any] = json.loads(out.read_text())["results"]
    return results


def run_gate(root: Path, env: dict[str, str]) -> dict[str, dict[str, dict[str, Any]]]:
    """Each suite's report lines by case id."""
    loaded = load_config(root / "gate.yml")
    found: dict[str, dict[str, dict[str, Any]]] = {}
    for index, suite in enumerate(loaded.config.suites):
        out = root / "reports" / str(index)
        subprocess.run(
            [sys.executable, "-m", "gate", "run", f"--suite={suite.name}", "--out", str(out),
             "--no-cache"],
            cwd=root, env={**env, "PYTHONPATH": str(REPO)}, capture_output=True, text=True,
            check=False, timeout=600,
        )  # fmt: skip
        report = out / "run.jsonl"
        lines = report.read_text().splitlines()[1:] if report.is_file() else []
        found[suite.name] = {line["id"]: line for line in map(json.loads, lines)}
    return found


def suite_of(names: dict[tuple[str, str], str], column: dict[str, Any]) -> str | None:
    """The gate's suite of a column of promptfoo's results: its prompt and its provider."""
    return names.get((column.get("raw", ""), column.get("provider", "")))


def compare(name: str, root: Path, binary: Path, env: dict[str, str]) -> tuple[int, int, list[str]]:
    """(results compared, same verdicts, disagreements) of one config."""
    loaded = load_config(root / "gate.yml")
    config = read_promptfoo(DiskFiles(root), "promptfooconfig.yaml")
    by_pair = {(s.system.prompt, s.system.provider): s.name for s in loaded.config.suites}  # type: ignore[union-attr]
    names = {}
    for prompt, provider in config.matrix():
        suite = by_pair.get((prompt.name, provider.name)) or next(iter(by_pair.values()))
        shown = provider.label or f"{provider.vendor}:{provider.model}"  # promptfoo's id()
        for key in (shown, provider.id):
            names[(prompt.raw, key)] = suite
    cases = promptfoo_cases(config)  # every test, in promptfoo's testIdx order
    gate = run_gate(root, env)
    same, notes = 0, []
    output = run_promptfoo(binary, root, env)
    results = output["results"]
    for result in results:
        case = cases[result["testIdx"]]
        suite = suite_of(names, output["prompts"][result["promptIdx"]])
        line = gate.get(suite or "", {}).get(case.id)
        pf = "pass" if result["success"] else "fail"
        mine = None if line is None else ("pass" if line["status"] == "pass" else "fail")
        expect = case.metadata.get("expect")
        where = f"  {name} · {suite} · {case.id}:"
        if mine == pf:
            same += 1
        else:
            notes.append(f"{where} promptfoo {pf}, gate {mine} (expected {expect})")
        if mine is not None and mine != expect:
            notes.append(f"{where} the gate says {mine}, the test expects {expect}")
    return len(results), same, notes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", action="append", choices=sorted(SUITES), help="only these")
    parser.add_argument("--keep", type=Path, help="write the projects here and keep them")
    args = parser.parse_args()
    binary = promptfoo_bin()
    if binary is None or not binary.exists():
        print("promptfoo is not installed (set PROMPTFOO_BIN): nothing to compare")
        return
    version = subprocess.run(
        [str(binary), "--version"], capture_output=True, text=True, check=False,
        env={**os.environ, **OFFLINE, "PATH": f"{binary.parent}:{os.environ.get('PATH', '')}"},
    ).stdout.strip()  # fmt: skip
    base = args.keep or Path(tempfile.mkdtemp(prefix="promptfoo-parity-"))
    server = ModelServer(responder=say_model, latency_s=0.02).start()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_"))},
        "OPENAI_BASE_URL": server.openai_base_url,
        "ANTHROPIC_BASE_URL": server.url,
        "OPENAI_API_KEY": "test-key",
        "ANTHROPIC_API_KEY": "test-key",
        "GATE_CACHE_DIR": str(base / ".gate-cache"),
    }
    print(f"promptfoo {version} ({binary}) vs gate, model server {server.url}\n")
    total = agreed = 0
    notes: list[str] = []
    try:
        for name in args.suite or list(SUITES):
            root = base / name
            root.mkdir(parents=True, exist_ok=True)
            subprocess.run(["git", "init", "-q"], cwd=root, check=True)
            write_suite(root, name)
            n, same, found = compare(name, root, binary, env)
            total, agreed, notes = total + n, agreed + same, notes + found
            print(f"{name:<12} {same:>4} / {n:<4} same verdict  ({100.0 * same / n:5.1f}%)")
    finally:
        server.stop()
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)
    print(f"\n{'all':<12} {agreed:>4} / {total:<4} same verdict  ({100.0 * agreed / total:5.1f}%)")
    if notes:
        print("\ndisagreements:\n" + "\n".join(notes))


if __name__ == "__main__":
    main()
