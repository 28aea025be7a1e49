"""`gate init`: scaffold gate.yml, starter cases and the PR workflow in an existing repository."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from gate.errors import InputError
from gate.init.detect import scan
from gate.init.files import files_for, write_files
from gate.init.frameworks import existing_evals_plan
from gate.init.gitignore import ignore_gate_folder
from gate.init.overrides import apply_overrides
from gate.init.plan import make_plan
from gate.init.promptfoo import promptfoo_configs


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "init",
        help="scaffold gate.yml, starter cases and the PR workflow in this repository",
        description=(
            "Find the prompt templates, model configs (YAML with `model:`) and Python entry "
            "point of the repository, then write gate.yml, a starter case file and "
            ".github/workflows/eval-gate.yml, and add the gate's own folder (.eval-gate/: "
            "reports, response cache) to .gitignore. Asks nothing; never overwrites a file "
            "without --force. The rules it uses are in docs/init.md."
        ),
    )
    p.add_argument("--dir", default=".", help="the repository's root (default: .)")
    p.add_argument("--prompt", action="append", metavar="FILE", help="use this prompt template")
    p.add_argument("--model-config", metavar="FILE", help="use this model config")
    p.add_argument("--target", metavar="MODULE:FUNCTION", help="evaluate this Python function")
    p.add_argument("--force", action="store_true", help="overwrite files that exist")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    root = Path(args.dir).resolve()
    if not root.is_dir():
        raise InputError(f"{args.dir}: no such folder", key="--dir")
    found = apply_overrides(
        scan(root), root, prompts=args.prompt, model_config=args.model_config, target=args.target
    )
    configs = promptfoo_configs(found.promptfoo)
    named = args.prompt or args.model_config or args.target
    plan = (None if named else existing_evals_plan(root, found, configs)) or make_plan(found)
    files = files_for(plan)
    written = write_files(root, files, force=args.force)
    print(f"gate init in {root}")
    for path in found.prompts:
        print(f"  found prompt template {path.path}")
    for skipped, why in found.skipped:
        print(f"  skipped {skipped}: {why}")
    for config in found.model_configs:
        print(f"  found model config {config} (model: {found.models[config].model})")
    for line in plan.why:
        print(f"  {line}")
    for verb, name in written:
        print(f"{verb} {name}")
    ignored = ignore_gate_folder(root)  # where `gate check` writes its reports
    if ignored:
        print(ignored)
    config_path = Path(args.dir) / "gate.yml"
    examples = (
        ""
        if all(s.promptfoo or s.framework for s in plan.suites)
        else ("The cases are examples (metadata.example): replace them with real ones. ")
    )
    print(
        f"{examples}Next:\n"
        f"  gate validate -c {config_path}\n"
        f"  gate check -c {config_path}   # against origin/HEAD, else main; --base REF"
    )
    return 0
