"""`gate`: the command line. Each command lives in `gate.commands.<name>`."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from gate import __version__
from gate.errors import GateError, InputError

COMMANDS = ["run", "compare", "check", "validate", "merge", "action", "demo", "schema"]


class Parser(argparse.ArgumentParser):
    """Usage errors exit 2 with one line, like every other input error."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        raise InputError(message)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="gate",
        description="Run an eval suite on the base and head of a change and gate the merge.",
    )
    parser.add_argument("--version", action="version", version=f"gate {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"gate.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"gate.commands.{name}":
                continue
            raise
        module.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.command is None:
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


if __name__ == "__main__":
    sys.exit(main())
