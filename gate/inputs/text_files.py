"""The user's text files as the gate reads them: UTF-8, and a byte that is not names its line."""

from __future__ import annotations

from pathlib import Path

from gate.errors import InputError


def decode_utf8(data: bytes, display: str) -> str:
    """`data` as UTF-8 with universal newlines (as `Path.read_text` reads it); an undecodable
    byte is an `InputError` at its line and column."""
    try:
        return data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        byte = data[exc.start : exc.start + 1].hex()
        raise InputError(
            f"not UTF-8 text: byte 0x{byte} at column {column} ({exc.reason}); "
            "save the file as UTF-8",
            file=display,
            line=line,
        ) from None


def read_utf8(path: Path, display: str, what: str) -> str:
    """The file's text; `what` names it in the message when it cannot be read."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read {what}: {exc.strerror}", file=display) from None
    return decode_utf8(data, display)
