"""docs/providers.md's local-server setup, as written there, runs: its model config and gate.yml
against an OpenAI-compatible server on 127.0.0.1 (the stand-in for Ollama, vLLM, llama.cpp),
with no key in the environment and none sent."""

from __future__ import annotations

import json
import os
import re

import yaml
from helpers.cli import REPO, Project, gate_here
from helpers.servers.model_server import ModelServer

PAGE = (REPO / "docs/providers.md").read_text()
SECTION = PAGE[PAGE.index("## A model on your machine") :]
SECTION = SECTION[: SECTION.index("\n## ", 1)]


def block(first_line: str) -> str:
    (found,) = [
        b for b in re.findall(r"```yaml\n(.*?)```", SECTION, re.S) if b.startswith(first_line)
    ]
    return found


def test_the_local_server_setup_runs_as_written(project: Project, server: ModelServer) -> None:
    model = yaml.safe_load(block("# config/model.yaml"))
    config = block("# gate.yml")
    assert "http://localhost:11434/v1" in config  # Ollama's address, as the page says
    project.write("config/model.yaml", block("# config/model.yaml"))
    project.write("gate.yml", config.replace("http://localhost:11434/v1", server.openai_base_url))
    project.write("prompts/support.md.j2", "Answer the customer: {{ question }}\n")
    project.cases(
        "evals/cases.jsonl",
        [
            {
                "id": "q1",
                "input": {"question": "opening hours?"},
                "expect": {"must_include": ["hours"]},
            }
        ],
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_"))}
    checked = gate_here("validate", cwd=project.root, env=env)
    assert checked.code == 0, checked.out + checked.err
    done = gate_here("run", "--no-cache", cwd=project.root, env=env)
    assert done.code == 0, done.err
    _, (line,), summary = project.read_report()
    assert line["status"] == "pass" and summary["pass_rate"] == 100.0
    (request,) = server.log
    assert request.body["model"] == model["model"] == "llama3.2"
    assert request.body["seed"] == 7 and request.body["max_tokens"] == 300
    assert "authorization" not in {k.lower() for k in request.headers}  # no key, none sent
    assert json.dumps(request.body).count("opening hours?") == 1


def test_the_endpoint_may_sit_in_the_model_config(project: Project, server: ModelServer) -> None:
    """`base_url` in the model config, with `provider: openai`, as the page offers."""
    assert "`base_url` may sit in the\nmodel config instead (with `provider: openai`)" in SECTION
    local = f"provider: openai\nbase_url: {server.openai_base_url}\n"
    project.write("config/model.yaml", block("# config/model.yaml") + local)
    gate_yml = yaml.safe_load(block("# gate.yml"))
    del gate_yml["suites"][0]["system"]["base_url"]
    project.config(gate_yml)
    project.write("prompts/support.md.j2", "{{ question }}\n")
    project.cases("evals/cases.jsonl", [{"id": "q1", "input": {"question": "hi"}, "expect": {}}])
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_"))}
    done = gate_here("run", "--no-cache", cwd=project.root, env=env)
    assert done.code == 0, done.err
    assert server.requests == 1 and server.log[0].body["model"] == "llama3.2"
