"""Every command's `--help` says what the command does and explains each of its flags."""

from __future__ import annotations

import argparse

import pytest
from helpers.cli import run_gate

from gate.cli import COMMANDS, build_parser


def subparser(name: str) -> argparse.ArgumentParser:
    parser = build_parser(name)
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    chosen: argparse.ArgumentParser = sub.choices[name]
    return chosen


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_the_help_describes_the_command_and_every_flag(name: str) -> None:
    parser = subparser(name)
    assert parser.description and len(parser.description.split()) >= 12, name
    assert parser.description.rstrip().endswith("."), name
    unexplained = [
        "/".join(action.option_strings) or action.dest
        for action in parser._actions
        if not isinstance(action, argparse._HelpAction) and not action.help
    ]
    assert unexplained == [], f"gate {name}: flags without help"


def test_the_real_command_prints_it() -> None:
    """`gate validate --help` as a user types it (the command missed its description)."""
    done = run_gate("validate", "--help")
    assert done.code == 0, done.err
    text = " ".join(done.out.split())
    assert "usage: gate validate" in text
    assert "without calling a model" in text and "Exit 0 ok, 1 broken cases, 2 bad input" in text
    assert "text for a person, json for a script" in text
