"""Action inputs and the GitHub environment, parsed once into typed settings."""

from __future__ import annotations

import pytest

from gate.errors import InputError
from gate.github.inputs import read_settings

BASE = {
    "GITHUB_EVENT_NAME": "pull_request",
    "GITHUB_EVENT_PATH": "/github/workflow/event.json",
    "GITHUB_REPOSITORY": "octo/app",
    "GITHUB_WORKSPACE": "/github/workspace",
}


def test_defaults_when_inputs_are_empty() -> None:
    settings = read_settings({**BASE, "INPUT_THRESHOLD": "", "INPUT_COMMENT": " "})
    inputs, env = settings.inputs, settings.env
    assert inputs.config == "gate.yml" and inputs.threshold is None
    assert inputs.comment == "on-change" and inputs.fail_on_regression is True
    assert inputs.github_token is None and inputs.block_severities is None
    assert env.api_url == "https://api.github.com" and env.server_url == "https://github.com"
    assert env.run_url is None and env.output is None


def test_every_input_with_hyphenated_names() -> None:
    settings = read_settings(
        {
            **BASE,
            "GITHUB_API_URL": "https://ghe.example.com/api/v3",
            "GITHUB_SERVER_URL": "https://ghe.example.com",
            "GITHUB_RUN_ID": "99",
            "INPUT_CONFIG": "evals/gate.yml",
            "INPUT_GITHUB-TOKEN": "ghs_x",
            "INPUT_THRESHOLD": "2.5",
            "INPUT_BLOCK-SEVERITIES": "blocker, major",
            "INPUT_BASE-REF": "release/1.x",
            "INPUT_COMMENT": "always",
            "INPUT_FAIL-ON-REGRESSION": "False",
        }
    )
    inputs = settings.inputs
    assert inputs.config == "evals/gate.yml" and inputs.threshold == 2.5
    assert inputs.block_severities == ["blocker", "major"]
    assert inputs.base_ref == "release/1.x" and inputs.comment == "always"
    assert inputs.fail_on_regression is False
    assert inputs.github_token is not None and inputs.github_token.get_secret_value() == "ghs_x"
    assert "ghs_x" not in repr(settings)
    assert settings.env.run_url == "https://ghe.example.com/octo/app/actions/runs/99"


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("FAIL-ON-REGRESSION", "yes", "`fail-on-regression` must be true or false, got 'yes'"),
        ("THRESHOLD", "three", "`threshold` must be a number of points, got 'three'"),
        ("THRESHOLD", "-1", "`threshold` must be 0 or more"),
        ("THRESHOLD", "nan", "`threshold` must be 0 or more"),
        ("COMMENT", "sometimes", "`comment` must be always, on-change or never"),
        ("BLOCK-SEVERITIES", "blocker,critical", "unknown severity 'critical'"),
    ],
)
def test_bad_inputs_are_input_errors_naming_the_input(name: str, value: str, message: str) -> None:
    with pytest.raises(InputError, match=message.replace("(", r"\(")) as info:
        read_settings({**BASE, f"INPUT_{name}": value})
    assert info.value.exit_code == 2


def test_outside_actions_the_missing_variables_are_named() -> None:
    with pytest.raises(InputError) as info:
        read_settings({"GITHUB_REPOSITORY": "octo/app"})
    message = str(info.value)
    assert "GITHUB_EVENT_NAME" in message and "GITHUB_WORKSPACE" in message
    assert "gate check" in message
