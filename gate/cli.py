"""`gate`: the command line. Each command lives in `gate.commands.<name>`."""

from __future__ import annotations

import argparse
import gc
import importlib
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import NoReturn

from gate import __version__
from gate.errors import GateError, InputError
from gate.interpreter import skip_plugin_scan
from gate.joblog import defuse_job_log

# Only the chosen command's module is imported: start-up time is paid on every CI step.
COMMANDS = {
    "init": "scaffold gate.yml, starter cases and the PR workflow in this repository",
    "run": "run a suite against one checkout and write its report",
    "compare": "compare a base and a head report: verdict, regressions, statistics",
    "check": "the whole PR flow locally: run base and head, compare, print the comment",
    "validate": "lint config and suites; run each case's reference through its own checks",
    "merge": "join the reports of `gate run --shard I/N` into one",
    "action": "the GitHub Action's entrypoint (reads the Actions environment)",
    "demo": "a complete PR comparison in a throwaway repository, offline",
    "schema": "print the JSON Schema of gate.yml or of a case",
}


class Parser(argparse.ArgumentParser):
    """Usage errors exit 2 with one line, like every other input error."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        raise InputError(message)


def chosen_command(argv: Sequence[str]) -> str | None:
    return next((arg for arg in argv if not arg.startswith("-")), None)


def import_command(name: str) -> ModuleType:
    """The command's module; pydantic's plugin scan is skipped first (`skip_plugin_scan`)."""
    skip_plugin_scan()
    return importlib.import_module(f"gate.commands.{name}")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    parser = Parser(
        prog="gate",
        description="Run an eval suite on the base and head of a change and gate the merge.",
    )
    parser.add_argument("--version", action="version", version=f"gate {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for name, summary in COMMANDS.items():
        if name == command:
            import_command(name).add_parser(sub)
        else:
            sub.add_parser(name, help=summary)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(chosen_command(args_list))
    try:
        args = parser.parse_args(args_list)
        if getattr(args, "handler", None) is None:
            parser.print_help()
            return 2
        code: int = args.handler(args)
        return code
    except GateError as exc:
        print(f"gate: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("gate: interrupted", file=sys.stderr)
        return 130


def run() -> NoReturn:
    """The `gate` executable. Under GitHub Actions it prints nothing the runner could read as
    a workflow command (`gate.joblog`), but the commands `gate action` writes on stdout (which
    pauses them around what it does not control)."""
    defuse_job_log(stdout=chosen_command(sys.argv[1:]) != "action")
    code = main()
    # At exit the collector sweeps every object still alive (the modules, pydantic's schemas):
    # 40-60 ms of each command here. Frozen objects are skipped; files and atexit handlers are
    # closed and run as usual.
    gc.freeze()
    sys.exit(code)


if __name__ == "__main__":
    run()
