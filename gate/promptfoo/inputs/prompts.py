"""promptfoo's prompts: inline strings, `file://` files and globs, `{id, label}` and `{raw,
label}` entries, or a `{path: label}` mapping, read as promptfoo reads them.

A `.txt` file holds several prompts separated by lines of `---`; `.md` and `.j2` one each;
`.json` and `.yaml` one chat prompt (a list of messages); `.jsonl` one per line. Python and
JavaScript prompt functions do not run here: an error names them.

Each prompt has promptfoo's label (what provider and test filters match) and the gate's
`name`, which names its suite: the `label` written in the config, else the file (relative to
the promptfoo config, `#2` for its second prompt), else its text (the first 40 characters).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from gate.errors import InputError
from gate.promptfoo.inputs.files import FILE, Files, expand, folder_of, is_glob, load_refs, read
from gate.promptfoo.inputs.js import js_stringify
from gate.promptfoo.inputs.yaml12 import load_yaml12

DELIMITER = "---"
NAME_CHARS = 40
FILE_EXTENSIONS = (".j2", ".json", ".jsonl", ".md", ".txt", ".yml", ".yaml")
SCRIPTS = (".py", ".js", ".cjs", ".mjs", ".ts", ".cts", ".mts", ".sh", ".rb")


@dataclass(frozen=True)
class Prompt:
    raw: str
    label: str  # promptfoo's label
    name: str  # the gate's name of it (suite names)
    file: str | None = None  # the checkout's file it comes from
    config: dict[str, Any] = field(default_factory=dict)

    @property
    def names(self) -> tuple[str, ...]:
        return (self.label, self.name)


def looks_like_file(text: str) -> bool:
    """promptfoo's `maybeFilePath`: a one-line string with `/`, `*`, a file's extension or
    `file://` names a file."""
    if "\n" in text:
        return False
    if text.startswith(FILE) or "*" in text or "/" in text or "\\" in text:
        return True
    tokens = text.split(":")
    if any(t.endswith(FILE_EXTENSIONS + SCRIPTS) for t in tokens[-2:]):
        return True
    return len(text) >= 4 and (text[-3] == "." or text[-4] == ".")


def _short(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= NAME_CHARS else flat[: NAME_CHARS - 1] + "…"


def _entries(value: Any, where: str) -> list[dict[str, Any]]:
    """promptfoo's `normalizeInput`."""
    if isinstance(value, str) and value:
        return [{"raw": value}]
    if isinstance(value, list) and value:
        out: list[dict[str, Any]] = []
        for item in value:
            if isinstance(item, str):
                out.append({"raw": item})
            elif isinstance(item, dict) and isinstance(item.get("raw") or item.get("id"), str):
                out.append({**item, "raw": item.get("raw") or item.get("id")})
            else:
                raise InputError(
                    f"a prompt must be a string or have `raw` or `id`: {item!r}", file=where
                )
        return out
    if isinstance(value, dict) and value:
        return [{"label": label, "raw": raw} for raw, label in value.items()]
    raise InputError(f"`prompts` must be a string, a list or a mapping, got {value!r}", file=where)


def read_prompts(files: Files, base: str, value: Any, where: str) -> list[Prompt]:
    """Every prompt of `prompts:` (resolved against the config's folder `base`)."""
    prompts: list[Prompt] = []
    for entry in _entries(value, where):
        raw, label = entry["raw"], entry.get("label")
        given = entry.get("config")
        config: dict[str, Any] = given if isinstance(given, dict) else {}
        if not isinstance(raw, str):
            raise InputError(f"a prompt must be text, got {raw!r}", file=where)
        if not looks_like_file(raw):
            name = label if isinstance(label, str) else _short(raw)
            prompts.append(
                Prompt(raw, label if isinstance(label, str) else raw, name, None, config)
            )
            continue
        ref = raw.removeprefix(FILE)
        if ref.endswith(SCRIPTS) or re.search(r"\.(py|js|ts|mjs|cjs)(:\w+)?$", ref):
            raise InputError(f"prompt {raw!r}: prompt functions do not run here", file=where)
        batch: list[Prompt] = []
        for path in expand(files, base, ref, where):
            batch += _from_file(files, base, path, label, config, where)
        if not batch:
            raise InputError(f"there are no prompts in {raw!r}", file=where)
        if is_glob(ref) and isinstance(label, str):
            batch = [_renamed(p, f"{label}: {p.name}") for p in batch]
        prompts += batch
    return _unique_names(prompts, where)


def _renamed(prompt: Prompt, name: str) -> Prompt:
    return Prompt(prompt.raw, prompt.label, name, prompt.file, prompt.config)


def _from_file(
    files: Files, base: str, path: str, label: Any, config: dict[str, Any], where: str
) -> list[Prompt]:
    text = read(files, path, where)
    shown = path[len(base) + 1 :] if base and path.startswith(base + "/") else path
    given = label if isinstance(label, str) else None
    if path.endswith(".txt"):
        parts = _split(text)
        return [
            Prompt(
                raw,
                f"{given}: {path}: {raw}" if given else f"{path}: {raw}",
                (given or shown) + (f"#{i + 1}" if len(parts) > 1 else ""),
                path,
                config,
            )
            for i, raw in enumerate(parts)
        ]
    if path.endswith(".jsonl"):
        lines = [line for line in re.split(r"\r?\n", text) if line]
        many = len(lines) > 1
        return [
            Prompt(line, f"{given or path}: {line}" if many else (given or path),
                   (given or shown) + (f"#{i + 1}" if many else ""), path, config)
            for i, line in enumerate(lines)
        ]  # fmt: skip
    if path.endswith((".json", ".yaml", ".yml")):
        raw = _chat_file(files, path, text)
        return [Prompt(raw, given or f"{path}: {raw}", given or shown, path, config)]
    if path.endswith((".md", ".j2")) or "." not in path.rsplit("/", 1)[-1]:
        return [Prompt(text, given or f"{path}: {text[:50]}...", given or shown, path, config)]
    raise InputError(f"prompt file {path!r}: unsupported type", file=where)


def _split(text: str) -> list[str]:
    prompts: list[str] = []
    buffer: list[str] = []
    for line in re.split(r"\r?\n", text):
        if line.strip() == DELIMITER:
            prompts.append("\n".join(buffer).strip())
            buffer = []
        else:
            buffer.append(line)
    prompts.append("\n".join(buffer).strip())
    return [p for p in prompts if p]


def _chat_file(files: Files, path: str, text: str) -> str:
    """A JSON or YAML prompt file, its `file://` references read, as compact JSON text."""
    try:
        data = json.loads(text) if path.endswith(".json") else load_yaml12(text, path)[0]
    except (ValueError, InputError):
        return text
    return js_stringify(load_refs(files, folder_of(path), data, path))


def _unique_names(prompts: list[Prompt], where: str) -> list[Prompt]:
    seen: dict[str, int] = {}
    out = []
    for prompt in prompts:
        count = seen.get(prompt.name, 0) + 1
        seen[prompt.name] = count
        out.append(prompt if count == 1 else _renamed(prompt, f"{prompt.name} ({count})"))
    return out
