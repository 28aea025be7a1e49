"""`gate init`: scaffold gate.yml, starter cases and the PR workflow in an existing repository."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from gate.errors import InputError
from gate.init.detect import Findings, Prompt, PythonTarget, model_of, scan, template_inputs
from gate.init.plan import files_for, make_plan


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "init",
        help="scaffold gate.yml, starter cases and the PR workflow in this repository",
        description=(
            "Find the prompt templates, model configs (YAML with `model:`) and Python entry "
            "point of the repository, then write gate.yml, a starter case file and "
            ".github/workflows/eval-gate.yml. Asks nothing; never overwrites a file without "
            "--force. The rules it uses are in docs/init.md."
        ),
    )
    p.add_argument("--dir", default=".", help="the repository's root (default: .)")
    p.add_argument("--prompt", action="append", metavar="FILE", help="use this prompt template")
    p.add_argument("--model-config", metavar="FILE", help="use this model config")
    p.add_argument("--target", metavar="MODULE:FUNCTION", help="evaluate this Python function")
    p.add_argument("--force", action="store_true", help="overwrite files that exist")
    p.set_defaults(handler=handle)


def relative(root: Path, name: str, flag: str) -> str:
    path = (root / name).resolve()
    if not path.is_file():
        raise InputError(f"{name}: no such file", key=flag)
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        raise InputError(f"{name} is outside the repository {root}", key=flag) from None


def apply_overrides(found: Findings, root: Path, args: argparse.Namespace) -> Findings:
    """What the flags name replaces what was detected, for that kind of file only."""
    if args.target:
        module, _, func = args.target.partition(":")
        if not module or not func:
            raise InputError(f"must look like module:function, got {args.target!r}", key="--target")
        found.targets = [PythonTarget(args.target, module.replace(".", "/") + ".py", ())]
    if args.prompt:
        prompts = []
        for name in args.prompt:
            path = relative(root, name, "--prompt")
            inputs = template_inputs((root / path).read_text(encoding="utf-8"))
            if inputs is None:
                raise InputError("not a valid jinja2 template", file=path, key="--prompt")
            prompts.append(Prompt(path, tuple(inputs), inputs))
        found.prompts = prompts
        if not args.target:
            found.targets = []  # naming prompts asks for a model system
    if args.model_config:
        path = relative(root, args.model_config, "--model-config")
        model = model_of((root / path).read_text(encoding="utf-8"))
        if not model:
            raise InputError("needs a string `model:` key", file=path, key="--model-config")
        found.model_configs, found.models = [path], {path: model}
    return found


def handle(args: argparse.Namespace) -> int:
    root = Path(args.dir).resolve()
    if not root.is_dir():
        raise InputError(f"{args.dir}: no such folder", key="--dir")
    found = apply_overrides(scan(root), root, args)
    plan = make_plan(found)
    files = files_for(plan)
    existing = [name for name in files if (root / name).exists()]
    if existing and not args.force:
        raise InputError(
            f"{', '.join(existing)} already exist(s); nothing was written (--force overwrites)"
        )
    print(f"gate init in {root}")
    for path in found.prompts:
        print(f"  found prompt template {path.path}")
    for config in found.model_configs:
        print(f"  found model config {config} (model: {found.models[config].model})")
    for line in plan.why:
        print(f"  {line}")
    for name, text in files.items():
        file = root / name
        file.parent.mkdir(parents=True, exist_ok=True)
        verb = "overwrote" if file.exists() else "wrote"
        file.write_text(text, encoding="utf-8")
        print(f"{verb} {name}")
    config_path = Path(args.dir) / "gate.yml"
    print(
        "The cases are examples (metadata.example): replace them with real ones. Next:\n"
        f"  gate validate -c {config_path}\n"
        f"  gate check -c {config_path}   # against origin/HEAD, else main; --base REF"
    )
    return 0
