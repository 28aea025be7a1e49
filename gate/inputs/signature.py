"""Whether a `python` target can take what the gate calls it with: the case's input, one dict.

The gate calls `function(input)` (and `repeat=` when the function has such a parameter). A
function that wants the question itself (`def reply(question: str)`) would get the whole dict,
and might even pass because the dict's text holds the question: it is refused, with a wrapper
that takes the dict as the fix. Judged from the parameters alone, however they were read:
`gate init` reads them from the syntax tree (it runs no code), `gate validate` and `gate run`
from the function the system's confined worker imported (`gate.systems.worker_main`).
Only what cannot work is refused: an annotation that is no mapping (`str`, `list[str]`, ...),
or more required arguments than the one dict.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

ParamKind = Literal[
    "positional_only", "positional_or_keyword", "var_positional", "keyword_only", "var_keyword"
]
POSITIONAL = ("positional_only", "positional_or_keyword")
# Annotations a dict never satisfies (their last dotted part, before any `[...]`).
NOT_A_MAPPING = frozenset(
    {
        "str", "bytes", "bytearray", "int", "float", "complex", "bool", "list", "tuple", "set",
        "frozenset", "List", "Tuple", "Set", "FrozenSet", "Sequence", "MutableSequence",
        "LiteralString",
    }
)  # fmt: skip
_GENERIC = re.compile(r"^(?:Optional|Union)\[(.*)\]$")
REPEAT = "repeat"  # passed by keyword when the function has it (`worker_main.takes_repeat`)


@dataclass(frozen=True)
class Param:
    name: str
    kind: ParamKind
    has_default: bool = False
    annotation: str | None = None  # as written (`str`, `dict[str, Any]`, `typing.List[str]`)


def _split_top(text: str, sep: str) -> list[str]:
    """`text` split at `sep` outside brackets."""
    parts, depth, current = [], 0, ""
    for char in text:
        if char in "[(":
            depth += 1
        elif char in "])":
            depth -= 1
        if char == sep and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    return [*parts, current]


def annotation_names(annotation: str) -> list[str]:
    """The types an annotation allows, by name: `str | None` and `Optional[str]` -> [str]."""
    text = annotation.strip().strip("'\"")
    inner = _GENERIC.match(re.sub(r"^(?:typing|typing_extensions|t)\.", "", text))
    alternatives = _split_top(inner.group(1), ",") if inner else _split_top(text, "|")
    names = []
    for part in alternatives:
        name = part.strip().split("[", 1)[0].rsplit(".", 1)[-1]
        if name not in ("None", "NoneType"):
            names.append(name)
    return names


def _not_a_mapping(annotation: str | None) -> bool:
    names = annotation_names(annotation) if annotation else []
    return bool(names) and all(name in NOT_A_MAPPING for name in names)


def _fix(target: str, wanted: list[str], by_name: bool = False) -> str:
    module, _, function = target.partition(":")
    named = "{0}=" if by_name else ""
    args = ", ".join((named + 'input["{0}"]').format(name) for name in wanted) or "input"
    return (
        f"take the dict in a function of your own and call {function} from it, e.g. "
        f"`def answer(input: dict) -> str: return {function}({args})` in {module}, and name "
        f"`{module}:answer` as the target"
    )


def input_problem(params: Sequence[Param], target: str) -> str | None:
    """Why `target` cannot take the case's input dict, with the fix; None when it can."""
    positional = [p for p in params if p.kind in POSITIONAL]
    star = next((p for p in params if p.kind == "var_positional"), None)
    first = positional[0] if positional else star
    calls = "the gate calls it with one argument, the case's input as a dict"
    if first is None:
        wanted = [p.name for p in params if not p.has_default and p.kind == "keyword_only"]
        return (
            f"{target} takes no positional argument, but {calls}: "
            f"{_fix(target, wanted, by_name=True)}"
        )
    required = [
        p
        for p in params
        if p is not first
        and not p.has_default
        and p.name != REPEAT
        and p.kind in (*POSITIONAL, "keyword_only")
    ]
    if required:
        names = [first.name, *(p.name for p in required)]
        shown = ", ".join(f"`{n}`" for n in names)
        return (
            f"{target} needs {len(names)} arguments ({shown}), but {calls}: {_fix(target, names)}"
        )
    if _not_a_mapping(first.annotation):
        return (
            f"{target} takes `{first.name}: {first.annotation}`, but {calls} "
            f'(`{{"{first.name}": ..., "id": ...}}`): {_fix(target, [first.name])}'
        )
    return None
