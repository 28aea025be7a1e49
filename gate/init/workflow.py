"""The PR workflow `gate init` writes: examples/pr-gate.yml, with the suites' provider keys."""

from __future__ import annotations

from importlib import resources


def workflow_text(key_envs: tuple[str, ...]) -> str:
    """examples/pr-gate.yml, shipped in the package, with the provider keys the suites need."""
    text = resources.files("gate.examples").joinpath("pr-gate.yml").read_text(encoding="utf-8")
    line = "          OPENAI_API_KEY: ${{ secrets.OPENAI_API_KEY }}\n"
    keys = "".join(line.replace("OPENAI_API_KEY", key) for key in key_envs)
    return text.replace(line, keys)
