"""The line `gate init` adds to the repository's .gitignore: the gate's own folder, where
`gate check` writes its reports and the Action keeps its response cache."""

from __future__ import annotations

from pathlib import Path

from gate.errors import InputError

GATE_FOLDER = ".eval-gate/"
# Lines that already ignore the folder at the repository's root (git's own spellings of it).
SAME = {".eval-gate", ".eval-gate/", "/.eval-gate", "/.eval-gate/", ".eval-gate/*", "/.eval-gate/*"}
COMMENT = "# Eval Gate: the reports of `gate check` and the response cache (gate init)\n"


def ignore_gate_folder(root: Path) -> str | None:
    """Append `.eval-gate/` to ROOT/.gitignore (created if missing) unless a line already
    ignores it. Returns what it did, for `gate init` to print, or None when nothing changed."""
    path = root / ".gitignore"
    try:
        text = path.read_text(encoding="utf-8") if path.exists() else ""
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read it: {exc}", file=path) from None
    if any(line.strip() in SAME for line in text.splitlines()):
        return None
    separator = "" if not text or text.endswith("\n") else "\n"
    try:
        with path.open("a", encoding="utf-8") as file:
            file.write(f"{separator}{COMMENT}{GATE_FOLDER}\n")
    except OSError as exc:
        raise InputError(f"cannot write it: {exc.strerror}", file=path) from None
    return f"added {GATE_FOLDER} to .gitignore" if text else f"wrote .gitignore ({GATE_FOLDER})"
