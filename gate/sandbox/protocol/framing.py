"""How every message travels between the gate and its zygote: 4-byte big-endian length,
then UTF-8 JSON (the shapes are in `gate.sandbox.protocol.messages`)."""

from __future__ import annotations

import json
import os
from typing import IO, Any

HEADER = 4
MAX_MESSAGE = 64 * 1024 * 1024


def encode(message: dict[str, Any]) -> bytes:
    body = json.dumps(message, separators=(",", ":"), allow_nan=False).encode()
    return len(body).to_bytes(HEADER, "big") + body


def write_fd(fd: int, message: dict[str, Any]) -> None:
    data = encode(message)
    while data:
        data = data[os.write(fd, data) :]


def _read_exactly(stream: IO[bytes], size: int) -> bytes | None:
    data = bytearray()
    while len(data) < size:
        chunk = stream.read(size - len(data))
        if not chunk:
            return None
        data += chunk
    return bytes(data)


def read_stream(stream: IO[bytes]) -> dict[str, Any] | None:
    """The next message, or None at end of stream."""
    header = _read_exactly(stream, HEADER)
    if header is None:
        return None
    size = int.from_bytes(header, "big")
    if size > MAX_MESSAGE:
        raise ValueError(f"message of {size} bytes exceeds the limit")
    body = _read_exactly(stream, size)
    if body is None:
        return None
    message: dict[str, Any] = json.loads(body)
    return message


class Reader:
    """Incremental decoder for bytes arriving on a non-blocking descriptor."""

    def __init__(self) -> None:
        self.buffer = bytearray()

    def feed(self, data: bytes) -> list[dict[str, Any]]:
        self.buffer += data
        messages = []
        while len(self.buffer) >= HEADER:
            size = int.from_bytes(self.buffer[:HEADER], "big")
            if size > MAX_MESSAGE:
                raise ValueError(f"message of {size} bytes exceeds the limit")
            if len(self.buffer) < HEADER + size:
                break
            messages.append(json.loads(bytes(self.buffer[HEADER : HEADER + size])))
            del self.buffer[: HEADER + size]
        return messages
