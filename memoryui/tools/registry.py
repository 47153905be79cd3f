"""The tool registry: every agent-facing tool, its JSON Schema, and one way to call it.

The JSON API, MCP and the UI all call `call_tool`, so argument checking, permission
checks and error texts live here once.
"""

from __future__ import annotations

import datetime as dt
import errno
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from memoryui.caches import TOOLS_BY_LAYOUT
from memoryui.store import Actor, Store, StoreError

if TYPE_CHECKING:
    from memoryui.search import IndexBase


class ToolError(Exception):
    """A failure reported to the model: HTTP status, error code, and the framework's text."""

    def __init__(self, message: str, code: str = "invalid_arguments", status: int = 400):
        super().__init__(message)
        self.message = message
        self.code = code
        self.status = status

    @classmethod
    def from_store(cls, exc: StoreError, prefix: str = "") -> ToolError:
        return cls(prefix + str(exc), exc.code, exc.status)


def forbidden(message: str) -> ToolError:
    return ToolError(message, "forbidden", 403)


@dataclass
class ToolContext:
    """Who is calling, for which scope, with which grants, at what local time.

    `trailers` go on every commit the tools make (the API and MCP put the
    `Memoryui-Token` trailer here, as files-API and Dagu writes carry it).
    """

    store: Store
    scope: str
    actor: Actor
    can_write_world: bool = False
    can_write_global: bool = False
    clock: Callable[[], dt.datetime] = field(default=lambda: dt.datetime.now().astimezone())
    trailers: list[tuple[str, str]] = field(default_factory=list)
    # the process's search index, opened when a tool first asks (search by meaning)
    search_index: Callable[[], IndexBase] | None = None

    def now(self) -> dt.datetime:
        return self.clock()

    def require_world(self) -> None:
        if not self.can_write_world:
            raise forbidden("this token may not write world knowledge (grant --world)")

    def require_global(self) -> None:
        if not self.can_write_global:
            raise forbidden("this token may not write the global memory (grant --global)")


@dataclass
class Tool:
    name: str
    dialect: str  # duragent | zerostack | jutul | anthropic
    description: str
    input_schema: dict
    func: Callable[[ToolContext, dict], str]
    layouts: frozenset[str]
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False
    title: str = ""
    # property -> the framework's text for a value outside the schema's enum ("{value}").
    enum_errors: dict[str, str] = field(default_factory=dict)

    def anthropic(self) -> dict:
        return {"name": self.name, "description": self.description,
                "input_schema": self.input_schema}

    def openai(self) -> dict:
        return {"type": "function", "function": {
            "name": self.name, "description": self.description,
            "parameters": self.input_schema}}


_REGISTRY: list[Tool] = []


def register(tool: Tool) -> Tool:
    _REGISTRY.append(tool)
    return tool


def tool(name: str, *, dialect: str, description: str, schema: dict, layouts: set[str],
         read_only: bool = False, destructive: bool = False, idempotent: bool = False,
         title: str = "", enum_errors: dict[str, str] | None = None
         ) -> Callable[[Callable[[ToolContext, dict], str]], Callable]:
    """Decorator registering a tool function `fn(ctx, args) -> result text`."""

    def deco(fn: Callable[[ToolContext, dict], str]) -> Callable[[ToolContext, dict], str]:
        register(Tool(name, dialect, description, schema, fn, frozenset(layouts), read_only,
                      destructive, idempotent, title or name, dict(enum_errors or {})))
        return fn

    return deco


_loaded = False


def _load() -> None:
    # Importing the dialect modules registers their tools. The dialects import this module
    # for `tool` and `ToolContext`, so this import is lazy on purpose: a deliberate registry
    # circle, resolved at first use, never at import time.
    global _loaded
    if not _loaded:
        from memoryui.tools import anthropic, duragent, jutul, zerostack  # noqa: F401
        _loaded = True


def _chosen_for(layout: str) -> dict[str, Tool]:
    """Tools offered in a layout by name (a layout's own dialect wins a name clash)."""
    _load()
    kept = TOOLS_BY_LAYOUT.get(layout)
    if kept is not None and kept[0] == len(_REGISTRY):
        return kept[1]
    chosen: dict[str, Tool] = {}
    for t in _REGISTRY:
        if layout not in t.layouts:
            continue
        if t.name in chosen and chosen[t.name].dialect == layout:
            continue
        chosen[t.name] = t
    TOOLS_BY_LAYOUT.put(layout, (len(_REGISTRY), chosen))
    return chosen


def tools_for(layout: str) -> list[Tool]:
    """Tools offered in a layout, one per name (a layout's own dialect wins a name clash)."""
    return list(_chosen_for(layout).values())


def find_tool(layout: str, name: str, args: dict | None = None) -> Tool | None:
    """The tool called `name` in a layout; `memory` dispatches on `command` vs `action`."""
    if name == "memory" and isinstance(args, dict):
        candidates = variants(layout, name)
        want = "anthropic" if "command" in args else "duragent"
        for t in candidates:
            if len(candidates) > 1 and t.dialect == want:
                return t
    return _chosen_for(layout).get(name)


def variants(layout: str, name: str) -> list[Tool]:
    """Every tool called `name` in a layout: `memory` can be Anthropic's and Duragent's."""
    _load()
    return [t for t in _REGISTRY if t.name == name and layout in t.layouts]


def lone_surrogate(value: object, where: str = "") -> str | None:
    """Where a JSON value holds a lone surrogate (text no UTF-8 file can hold), else None.

    `json.loads` accepts `"\\ud800"`; writing it would fail deep in the store, so every
    JSON body and every tool call is checked once, up front.
    """
    if isinstance(value, str):
        return (where or "the value") if _SURROGATE.search(value) else None
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str) and _SURROGATE.search(key):
                return f"a field name in {where}" if where else "a field name"
            found = lone_surrogate(item, f"{where}.{key}" if where else str(key))
            if found:
                return found
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found = lone_surrogate(item, f"{where}[{i}]")
            if found:
                return found
    return None


def object_schema(properties: dict, required: list[str]) -> dict:
    """A tool's arguments as JSON Schema: these properties and no others."""
    return {"type": "object", "properties": properties, "required": required,
            "additionalProperties": False}


def check_args(schema: dict, args: object, enum_errors: dict[str, str] | None = None) -> dict:
    """Validate arguments against the tool's schema: types, required keys, unknown keys."""
    if not isinstance(args, dict):
        raise ToolError("the request body must be a JSON object of tool arguments")
    if any(isinstance(k, str) and _SURROGATE.search(k) for k in args):
        raise ToolError("a field name is not valid Unicode text (it has a lone surrogate)")
    props = schema.get("properties", {})
    if schema.get("additionalProperties", True) is False:
        unknown = sorted(set(args) - set(props))
        if unknown:
            raise ToolError(f"unknown field(s): {', '.join(unknown)}; "
                            f"allowed: {', '.join(props) or 'none'}")
    for key in schema.get("required", []):
        if key not in args:
            raise ToolError(f"missing required field '{key}'")
    for key, value in args.items():
        spec = props.get(key)
        if spec is None:
            continue
        if (enum_errors and key in enum_errors and isinstance(value, str)
                and value not in spec.get("enum", [value]) and not _SURROGATE.search(value)):
            raise ToolError(enum_errors[key].format(value=value))
        _check_type(key, spec, value)
    return args


_SURROGATE = re.compile("[\ud800-\udfff]")
_TYPES: dict[str, type | tuple[type, ...]] = {
    "string": str, "integer": int, "boolean": bool, "object": dict, "array": list,
    "number": (int, float)}


def _check_type(key: str, spec: dict, value: object) -> None:
    types = spec.get("type")
    if types is None:
        return
    names = types if isinstance(types, list) else [types]
    ok = False
    for name in names:
        if name == "null" and value is None:
            ok = True
        elif name in ("integer", "number") and isinstance(value, bool):
            continue
        elif name in _TYPES and isinstance(value, _TYPES[name]):
            ok = True
    if not ok:
        raise ToolError(f"field '{key}' must be of type {' or '.join(names)}, "
                        f"got {type(value).__name__ if value is not None else 'null'}")
    if isinstance(value, str) and _SURROGATE.search(value):
        raise ToolError(f"field '{key}' is not valid Unicode text (it has a lone surrogate)")
    if "enum" in spec and value not in spec["enum"]:
        raise ToolError(f"field '{key}' must be one of: {', '.join(map(str, spec['enum']))}")
    if spec.get("type") == "array" and "items" in spec and isinstance(value, list):
        for i, item in enumerate(value):
            _check_type(f"{key}[{i}]", spec["items"], item)


def call_tool(ctx: ToolContext, name: str, args: object) -> str:
    """Run a tool: the single entry point for the API, MCP and the UI."""
    t = find_tool(ctx.store.layout.key, name, args if isinstance(args, dict) else None)
    if t is None:
        offered = ", ".join(sorted(x.name for x in tools_for(ctx.store.layout.key)))
        raise ToolError(f"unknown tool '{name}'; this workspace offers: {offered}",
                        "not_found", 404)
    checked = check_args(t.input_schema, args, t.enum_errors)
    try:
        return t.func(ctx, checked)
    except StoreError as exc:
        raise ToolError.from_store(exc) from None
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):  # before the store names it DiskFull
            raise ToolError(DISK_FULL, "insufficient_storage", 507) from None
        raise


DISK_FULL = "the workspace disk is full"
