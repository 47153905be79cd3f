"""zerostack's memory tools: `memory_write`, `memory_read`, `memory_search`, `memory_edit`.

Texts, caps, de-duplication, search ranking and rendering follow gi-dellav/zerostack's
current `src/extras/memory/mod.rs` (reference/seed-systems.md section 4) byte for byte.
The scope is the project slug. Deliberate differences:

- Paths inside results are workspace-relative (`Wrote 5 bytes to
  projects/api-2a0e6f52/daily/2026-02-12.md`, `list` gives `MEMORY.md`, ...) where
  zerostack prints absolute paths.
- No `.bak` files: every earlier version is a git commit, so the backup warning never
  appears.
- `list` and `memory_search` see the layout's files: the global MEMORY.md (zerostack scans
  every `*.md` in the root, which holds only MEMORY.md), the project's notes and daily logs.
- `long_term` writes and edits change the workspace-wide MEMORY.md, so they need the
  token's global grant (403 otherwise); reads need no grant.
- A daily name that passes zerostack's check (digits and `-`) but is not a real
  `YYYY-MM-DD` date names a file that cannot exist here: reads give `(empty)`, edits the
  framework's I/O text `No such file or directory (os error 2)` (404), as for any
  missing file.

Every zerostack error is a plain text (`ToolError::Msg`); here it is the `message` with
code `invalid_arguments` (400), or `not_found` (404) for a missing file.
"""

from __future__ import annotations

from memoryui.store import Kind, NotFound
from memoryui.store.budgets import cut, truncate_bytes
from memoryui.tools.registry import ToolContext, ToolError, object_schema, tool
from memoryui.tools.zerostack_files import (
    daily_path,
    is_safe_daily_name,
    memory_list,
    normalize_line,
    note_path,
    rust_lines,
    today,
    unknown_target,
)
from memoryui.tools.zerostack_help import (
    EDIT_HELP,
    MODE_HELP,
    QUERY_HELP,
    READ_HELP,
    SEARCH_HELP,
    SOURCE_HELP,
    TARGET_HELP,
    WRITE_HELP,
)
from memoryui.tools.zerostack_search import MODES as SEARCH_MODES
from memoryui.tools.zerostack_search import memory_search

LAYOUTS = {"zerostack"}
MAX_WRITE_BYTES = 64 * 1024
TARGETS = ("long_term", "scratchpad", "daily", "note")
SOURCES = ("long_term", "scratchpad", "daily", "note", "list")
NOT_FOUND_TEXT = "No such file or directory (os error 2)"
BAD_NOTE = "invalid note name (no slashes or dots)"

# -- memory_write -----------------------------------------------------------------------

def _write_path(ctx: ToolContext, target: str, name: str | None) -> str:
    if target == "long_term":
        ctx.require_global()
        return ctx.store.path_for(Kind.GLOBAL)
    if target == "scratchpad":
        return ctx.store.path_for(Kind.SCRATCHPAD, ctx.scope)
    if target == "daily":
        return ctx.store.path_for(Kind.DAILY, ctx.scope, today(ctx))
    if target == "note":
        return note_path(ctx, name, BAD_NOTE)
    raise unknown_target(target)


def memory_write(ctx: ToolContext, target: str, content: str, mode: str | None = None,
                 name: str | None = None) -> str:
    """Append (de-duplicated for long_term) or overwrite; content capped at 64 KiB."""
    path = _write_path(ctx, target, name)
    original_len = len(content.encode())
    content = truncate_bytes(content, MAX_WRITE_BYTES)
    overwrite = mode == "overwrite"
    outcome: dict[str, object] = {"len": len(content.encode()), "note": ""}

    def apply(old: str | None) -> str | None:
        if overwrite:
            return content
        append_content = content
        if target == "long_term":
            seen = {n for n in map(normalize_line, rust_lines(old or "")) if n}
            kept, skipped = [], 0
            for line in content.split("\n"):
                key = normalize_line(line)
                if not key:
                    kept.append(line)
                elif key in seen:
                    skipped += 1
                else:
                    seen.add(key)
                    kept.append(line)
            if skipped:
                if not any(normalize_line(line) for line in kept):
                    outcome["nothing"] = skipped
                    return None
                append_content = "\n".join(kept)
                outcome["note"] = f" (skipped {skipped} duplicate line(s))"
        prev = old or ""
        if prev and not prev.endswith("\n"):
            prev += "\n"
        prev += append_content
        if not prev.endswith("\n"):
            prev += "\n"
        outcome["len"] = len(append_content.encode())
        return prev

    ctx.store.update(path, apply, actor=ctx.actor, trailers=ctx.trailers,
                     tool="memory_write")
    if "nothing" in outcome:
        return f"Nothing written to {path}: all {outcome['nothing']} line(s) were duplicates"
    msg = f"Wrote {outcome['len']} bytes to {path}{outcome['note']}"
    if original_len > len(content.encode()):
        msg += f" (truncated from {original_len} bytes to {MAX_WRITE_BYTES} byte cap)"
    return msg


# -- memory_read ------------------------------------------------------------------------

def _read_capped(ctx: ToolContext, path: str | None, kind: Kind) -> str:
    """The file as memory_read returns it: cut where the store's budget rule says."""
    text = ctx.store.read(path) if path else None
    if not text:
        return "(empty)"
    found = cut(ctx.store.layout, kind, text)
    return found.apply(text, path or "") if found else text


def memory_read(ctx: ToolContext, source: str, name: str | None = None) -> str:
    if source == "long_term":
        return _read_capped(ctx, ctx.store.path_for(Kind.GLOBAL), Kind.GLOBAL)
    if source == "scratchpad":
        return _read_capped(ctx, ctx.store.path_for(Kind.SCRATCHPAD, ctx.scope), Kind.SCRATCHPAD)
    if source == "daily":
        date = today(ctx) if name is None else name
        if not is_safe_daily_name(date):
            raise ToolError("invalid daily date name (expected YYYY-MM-DD)")
        return _read_capped(ctx, daily_path(ctx, date), Kind.DAILY)
    if source == "note":
        if name is None:
            raise ToolError("note requires name")
        return _read_capped(ctx, note_path(ctx, name, "invalid note name"), Kind.NOTE)
    if source == "list":
        return memory_list(ctx)
    raise ToolError(f"unknown source: {source}")


# -- memory_edit -------------------------------------------------------------------------

def memory_edit(ctx: ToolContext, target: str, new_str: str, name: str | None = None,
                old_str: str | None = None) -> str:
    """Replace a substring that occurs exactly once; no old_str deletes a whole note."""
    path: str | None
    if target == "long_term":
        ctx.require_global()
        path = ctx.store.path_for(Kind.GLOBAL)
    elif target == "scratchpad":
        path = ctx.store.path_for(Kind.SCRATCHPAD, ctx.scope)
    elif target == "daily":
        date = today(ctx) if name is None else name
        if not is_safe_daily_name(date):
            raise ToolError(
                "invalid daily date name (expected YYYY-MM-DD: digits and hyphens only)")
        path = daily_path(ctx, date)
    elif target == "note":
        path = note_path(ctx, name, BAD_NOTE)
    else:
        raise unknown_target(target)
    if old_str is None:
        if target != "note":
            raise ToolError("memory_edit without old_str deletes a whole note; it is only "
                            "allowed for target=note, not long_term/scratchpad/daily")
        assert path is not None  # note_path returns a path or raises
        try:
            ctx.store.delete(path, actor=ctx.actor, trailers=ctx.trailers,
                             tool="memory_edit")
        except NotFound:
            raise ToolError(NOT_FOUND_TEXT, "not_found", 404) from None
        return f"Deleted {path}"
    if path is None:
        raise ToolError(NOT_FOUND_TEXT, "not_found", 404)

    def apply(current: str | None) -> str:
        if current is None:
            raise ToolError(NOT_FOUND_TEXT, "not_found", 404)
        count = current.count(old_str)
        if count != 1:
            raise ToolError(f"old_str matched {count} time(s) in {path}; "
                            "it must match exactly once")
        return current.replace(old_str, new_str, 1)

    ctx.store.update(path, apply, actor=ctx.actor, trailers=ctx.trailers,
                     tool="memory_edit")
    return f"Edited {path}"


# -- registration ------------------------------------------------------------------------

_TARGET = {"type": "string", "enum": list(TARGETS), "description": TARGET_HELP}


@tool("memory_write", dialect="zerostack", layouts=LAYOUTS, destructive=True,
      title="Write memory",
      description=WRITE_HELP,
      schema=object_schema({
          "target": _TARGET,
          "content": {"type": "string", "description": "Markdown content to store (max 64KB; "
                                                       "longer is truncated with a warning)"},
          "mode": {"type": "string", "description": "append (default) or overwrite"},
          "name": {"type": "string", "description": "filename stem, required for note"},
      }, ["target", "content"]),
      enum_errors={"target": "unknown target: {value}"})
def memory_write_tool(ctx: ToolContext, args: dict) -> str:
    return memory_write(ctx, args["target"], args["content"], args.get("mode"),
                        args.get("name"))


@tool("memory_read", dialect="zerostack", layouts=LAYOUTS, read_only=True, idempotent=True,
      title="Read memory",
      description=READ_HELP,
      schema=object_schema({
          "source": {"type": "string", "enum": list(SOURCES),
                     "description": SOURCE_HELP},
          "name": {"type": "string", "description": "note stem or YYYY-MM-DD"},
      }, ["source"]),
      enum_errors={"source": "unknown source: {value}"})
def memory_read_tool(ctx: ToolContext, args: dict) -> str:
    return memory_read(ctx, args["source"], args.get("name"))


@tool("memory_search", dialect="zerostack", layouts=LAYOUTS, read_only=True, idempotent=True,
      title="Search memory",
      description=SEARCH_HELP,
      schema=object_schema({"query": {"type": "string", "description": QUERY_HELP},
                            "mode": {"type": "string", "enum": list(SEARCH_MODES),
                                     "description": MODE_HELP}}, ["query"]),
      enum_errors={"mode": "unknown mode: {value} (use hybrid or keyword)"})
def memory_search_tool(ctx: ToolContext, args: dict) -> str:
    return memory_search(ctx, args["query"], args.get("mode") or "hybrid")


@tool("memory_edit", dialect="zerostack", layouts=LAYOUTS, destructive=True,
      title="Edit memory",
      description=EDIT_HELP,
      schema=object_schema({
          "target": _TARGET,
          "name": {"type": "string", "description": "note stem, required for note"},
          "old_str": {"type": "string",
                      "description": "substring to replace; must occur exactly once. Omit "
                                     "to delete the whole note (target=note only)"},
          "new_str": {"type": "string",
                      "description": "replacement text; empty string deletes the matched "
                                     "substring"},
      }, ["target", "new_str"]),
      enum_errors={"target": "unknown target: {value}"})
def memory_edit_tool(ctx: ToolContext, args: dict) -> str:
    return memory_edit(ctx, args["target"], args["new_str"], args.get("name"),
                       args.get("old_str"))
