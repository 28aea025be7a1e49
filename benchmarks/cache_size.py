"""The response cache's size for a typical suite: what actions/cache stores between runs.

Runs `gate run` (a real subprocess) for both sides of a PR, a base prompt and a head prompt,
against the test model server (tests/helpers/servers/model_server.py), whose answers are
`--words` words long (a chat answer of a few paragraphs is 100 to 300 words), and prints for
the cache folder this leaves: the entries, their bytes, the disk they take, and the archive
actions/cache makes of it (`tar --posix` compressed with zstd, as the action does; gzip too).

    python benchmarks/cache_size.py [--cases 200] [--words 150] [--repeats 1]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import string
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))  # for helpers.servers

from helpers.servers.model_server import ChatRequest, ModelServer  # noqa: E402

# Answers are words drawn from a vocabulary of 4,000 made-up words, so that they compress
# about as well as prose does (zstd: 3 to 4 times); repeated filler would compress far better.
VOCABULARY = [
    "".join(random.Random(n).choices(string.ascii_lowercase, k=random.Random(-n).randint(2, 9)))
    for n in range(4000)
]


def answer_of(words: int):  # type: ignore[no-untyped-def]
    def respond(request: ChatRequest) -> str:
        rng = random.Random(request.user)
        return " ".join(rng.choice(VOCABULARY) for _ in range(words))

    return respond


def write_project(root: Path, base_url: str, n: int, repeats: int) -> None:
    (root / "prompts").mkdir(parents=True)
    (root / "model.yaml").write_text("model: bench-model\ntemperature: 0.2\n")
    rows = [
        {"id": f"c{i:04}", "input": {"question": f"What does plan {i} cost per month?"},
         "expect": {"must_include": ["plan"]}}
        for i in range(n)
    ]  # fmt: skip
    (root / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    config = {
        "repeats": repeats,
        "concurrency": 16,
        "cases": "cases.jsonl",
        "system": {
            "kind": "openai",
            "model_config": "model.yaml",
            "prompt": "prompts/ask.j2",
            "base_url": base_url,
            "api_key_env": "BENCH_KEY",
        },
    }
    (root / "gate.yml").write_text(yaml.safe_dump(config, sort_keys=False))


def gate_run(root: Path, label: str, cache: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO), "GATE_CACHE_DIR": str(cache), "BENCH_KEY": "k"}
    subprocess.run(
        [sys.executable, "-m", "gate", "run", "-q", "--label", label], cwd=root, env=env,
        check=True, capture_output=True,
    )  # fmt: skip


def archive_size(cache: Path, compress: list[str], name: str) -> int:
    """The archive actions/cache would upload: the folder, relative to its parent."""
    target = cache.parent / name
    subprocess.run(
        ["tar", "--posix", *compress, "-cf", str(target), "-P", "-C", str(cache.parent),
         cache.name], check=True,
    )  # fmt: skip
    return target.stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--words", type=int, default=150)
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory() as tmp,
        ModelServer(responder=answer_of(args.words)) as model,
    ):
        root, cache = Path(tmp) / "project", Path(tmp) / "cache"
        write_project(root, model.openai_base_url, args.cases, args.repeats)
        for label, prompt in (
            ("base", "Answer: {{ question }}"),
            ("head", "Answer briefly: {{ question }}"),
        ):
            (root / "prompts/ask.j2").write_text(prompt)
            gate_run(root, label, cache)
        entries = list(cache.rglob("v*/??/*.json"))
        raw = sum(e.stat().st_size for e in entries)
        disk = int(subprocess.run(["du", "-sk", str(cache)], capture_output=True, text=True,
                                  check=True).stdout.split()[0]) * 1024  # fmt: skip
        zstd = ["--use-compress-program", "zstd -T0 --long=30"] if shutil.which("zstd") else ["-z"]
        packed = archive_size(cache, zstd, "cache.tzst")
        gzipped = archive_size(cache, ["-z"], "cache.tgz")
        print(
            f"{args.cases} cases x 2 sides x {args.repeats} repeats, answers of {args.words} words"
        )
        print(f"model calls:        {model.requests}")
        print(f"entries:            {len(entries)}")
        print(f"bytes of entries:   {raw:,} ({raw / len(entries):,.0f} per entry)")
        print(f"disk used:          {disk:,}")
        print(f"archive (zstd):     {packed:,}  <- what actions/cache stores")
        print(f"archive (gzip):     {gzipped:,}")
        print(f"caches in 10 GB:    {10e9 / packed:,.0f}")


if __name__ == "__main__":
    main()
