"""zerostack's files and texts: where each target lives in the layout, the files `list` and
`memory_search` see, and the Rust string rules (`str::lines`, `split_whitespace`) its texts
follow byte for byte."""

from __future__ import annotations

import posixpath
import re

from memoryui.store import InvalidName, Kind
from memoryui.tools.registry import ToolContext, ToolError

# Rust's `char::is_whitespace` (Unicode White_Space), used by split_whitespace and trim.
WS_CHARS = ("\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
             "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
_WS_RUN = re.compile(f"[{re.escape(WS_CHARS)}]+")


# -- Rust string helpers ------------------------------------------------------------

def split_whitespace(text: str) -> list[str]:
    return [part for part in _WS_RUN.split(text) if part]


def normalize_line(line: str) -> str:
    """De-duplication key: whitespace runs collapsed to one space, case kept."""
    return " ".join(split_whitespace(line))


def rust_lines(text: str) -> list[str]:
    """`str::lines`: split on `\\n`, drop the `\\r` of `\\r\\n`, no final empty line."""
    parts = text.split("\n")
    if parts[-1] == "":
        parts.pop()
        return [p[:-1] if p.endswith("\r") else p for p in parts]
    return [p[:-1] if p.endswith("\r") else p for p in parts[:-1]] + parts[-1:]


def is_safe_daily_name(name: str) -> bool:
    return bool(name) and all(c in "0123456789-" for c in name)


# -- paths ----------------------------------------------------------------------------

def today(ctx: ToolContext) -> str:
    return ctx.now().strftime("%Y-%m-%d")


def note_path(ctx: ToolContext, name: str | None, bad: str) -> str:
    if name is None:
        raise ToolError(bad)
    try:
        return ctx.store.path_for(Kind.NOTE, ctx.scope, name)
    except InvalidName as exc:
        # Our extra rules (length, control characters) keep their own, clearer text.
        raise ToolError(bad if str(exc).startswith("invalid note name") else str(exc)) from None


def daily_path(ctx: ToolContext, date: str) -> str | None:
    """None for a safe-looking name that is not a real date (no such file can exist)."""
    try:
        return ctx.store.path_for(Kind.DAILY, ctx.scope, date)
    except InvalidName:
        return None


def _folder(ctx: ToolContext, kind: Kind, sample: str) -> str:
    return posixpath.dirname(ctx.store.path_for(kind, ctx.scope, sample))


def _md_files(ctx: ToolContext, folder: str) -> list[str]:
    """The `*.md` files directly in a folder (zerostack's non-recursive `read_dir`)."""
    return [p for p in ctx.store.list_files(folder)
            if "/" not in p[len(folder) + 1:] and p.endswith(".md")]


def _notes_folder(ctx: ToolContext) -> str:
    return _folder(ctx, Kind.NOTE, "note")


def _daily_folder(ctx: ToolContext) -> str:
    return _folder(ctx, Kind.DAILY, "2000-01-01")


def memory_list(ctx: ToolContext) -> str:
    """`source=list`: the global MEMORY.md, the project's notes and daily logs, sorted."""
    root_md = ctx.store.path_for(Kind.GLOBAL)
    paths = [root_md] if ctx.store.exists(root_md) else []
    paths += _md_files(ctx, _notes_folder(ctx)) + _md_files(ctx, _daily_folder(ctx))
    return "\n".join(sorted(paths))


def searched_files(ctx: ToolContext) -> list[tuple[str, bool, str]]:
    """(path, is_daily, text) of every file memory_search looks at."""
    out: list[tuple[str, bool, str]] = []
    root_md = ctx.store.path_for(Kind.GLOBAL)
    text = ctx.store.read(root_md)
    if text is not None:
        out.append((root_md, False, text))
    out += [(p, False, t) for p, t in ctx.store.read_folder(_notes_folder(ctx), ".md")]
    out += [(p, True, t) for p, t in ctx.store.read_folder(_daily_folder(ctx), ".md")]
    return out


def unknown_target(target: str) -> ToolError:
    return ToolError(f"unknown target: {target}")
