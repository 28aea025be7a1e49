"""Private copies of the harness modules, out of the candidate's reach.

Candidate code can monkeypatch any module it can import (`builtins.len = ...`,
`gate.sandbox.zygote.harness._emit = ...`). The harness therefore never runs from its real module
dicts: the zygote copies each module's globals, gives the copies a private snapshot of the
builtins, and rebinds every function to its copy. The copies are referenced only from the
zygote's and the harness's local variables, which candidate code cannot read (frame access is
blocked by the audit hook).

Rules for modules run this way: reach other modules only through aliases bound at import
time (`_write = os.write`), use builtin types but no stdlib classes after the candidate ran,
and keep mutable state only in names listed in `PRIVATE_STATE` (fresh objects per copy).
"""

from __future__ import annotations

import builtins
from types import FunctionType, ModuleType
from typing import Any

World = dict[str, Any]


def _rebind(func: FunctionType, world: World) -> FunctionType:
    copy = FunctionType(func.__code__, world, func.__name__, func.__defaults__, func.__closure__)
    copy.__kwdefaults__ = func.__kwdefaults__
    copy.__qualname__ = func.__qualname__
    return copy


def _refuse_shared_state(module: ModuleType, world: World) -> None:
    """A mutable module-level container would be shared by the copy and the real module,
    where candidate code can change it."""
    private = set(getattr(module, "PRIVATE_STATE", ()))
    for name, value in world.items():
        shared = type(value) in (list, dict, set, bytearray) and not name.startswith("__")
        if shared and name not in private:
            raise TypeError(f"{module.__name__}.{name} is mutable: list it in PRIVATE_STATE")


def privatize(modules: list[ModuleType]) -> dict[str, World]:
    """Private worlds keyed by module name; functions refer to each other's private copies."""
    private_builtins = dict(vars(builtins))
    worlds: dict[str, World] = {}
    copies: dict[int, FunctionType] = {}
    for module in modules:
        world = dict(vars(module))
        _refuse_shared_state(module, world)
        world["__builtins__"] = private_builtins
        for name, value in world.items():
            if type(value) is FunctionType and value.__globals__ is vars(module):
                copies[id(value)] = world[name] = _rebind(value, world)
        for name in getattr(module, "PRIVATE_STATE", ()):
            world[name] = type(world[name])()
        worlds[module.__name__] = world
    for world in worlds.values():
        for name, value in world.items():
            if type(value) is FunctionType and id(value) in copies:
                world[name] = copies[id(value)]
    return worlds
