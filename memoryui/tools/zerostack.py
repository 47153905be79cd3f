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

import functools
import posixpath
import re
from dataclasses import dataclass

from memoryui.store import InvalidName, Kind, NotFound
from memoryui.store.budgets import (
    ZEROSTACK_MARKER,
    ZEROSTACK_MAX_BYTES,
    cap_bytes,
    cut,
    truncate_bytes,
)
from memoryui.tools.registry import ToolContext, ToolError, tool
from memoryui.tools.zerostack_help import QUERY_HELP, SOURCE_HELP, TARGET_HELP

LAYOUTS = {"zerostack"}
MAX_INJECT_BYTES = ZEROSTACK_MAX_BYTES
MAX_WRITE_BYTES = 64 * 1024
CONTEXT = 3
MAX_BLOCKS = 5
TARGETS = ("long_term", "scratchpad", "daily", "note")
SOURCES = ("long_term", "scratchpad", "daily", "note", "list")
READ_MARKER = ZEROSTACK_MARKER
NOT_FOUND_TEXT = "No such file or directory (os error 2)"
BAD_NOTE = "invalid note name (no slashes or dots)"

# Rust's `char::is_whitespace` (Unicode White_Space), used by split_whitespace and trim.
_WS_CHARS = ("\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
             "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
_WS_RUN = re.compile(f"[{re.escape(_WS_CHARS)}]+")


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


truncate_cjk = cap_bytes  # zerostack's name for the store's byte cap


def is_safe_daily_name(name: str) -> bool:
    return bool(name) and all(c in "0123456789-" for c in name)


# -- paths ----------------------------------------------------------------------------

def _today(ctx: ToolContext) -> str:
    return ctx.now().strftime("%Y-%m-%d")


def _note_path(ctx: ToolContext, name: str | None, bad: str) -> str:
    if name is None:
        raise ToolError(bad)
    try:
        return ctx.store.path_for(Kind.NOTE, ctx.scope, name)
    except InvalidName as exc:
        # Our extra rules (length, control characters) keep their own, clearer text.
        raise ToolError(bad if str(exc).startswith("invalid note name") else str(exc)) from None


def _daily_path(ctx: ToolContext, date: str) -> str | None:
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


def _searched_files(ctx: ToolContext) -> list[tuple[str, bool, str]]:
    """(path, is_daily, text) of every file memory_search looks at."""
    out: list[tuple[str, bool, str]] = []
    root_md = ctx.store.path_for(Kind.GLOBAL)
    text = ctx.store.read(root_md)
    if text is not None:
        out.append((root_md, False, text))
    out += [(p, False, t) for p, t in ctx.store.read_folder(_notes_folder(ctx), ".md")]
    out += [(p, True, t) for p, t in ctx.store.read_folder(_daily_folder(ctx), ".md")]
    return out


def _unknown_target(target: str) -> ToolError:
    return ToolError(f"unknown target: {target}")


# -- memory_write -----------------------------------------------------------------------

def _write_path(ctx: ToolContext, target: str, name: str | None) -> str:
    if target == "long_term":
        ctx.require_global()
        return ctx.store.path_for(Kind.GLOBAL)
    if target == "scratchpad":
        return ctx.store.path_for(Kind.SCRATCHPAD, ctx.scope)
    if target == "daily":
        return ctx.store.path_for(Kind.DAILY, ctx.scope, _today(ctx))
    if target == "note":
        return _note_path(ctx, name, BAD_NOTE)
    raise _unknown_target(target)


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
        date = _today(ctx) if name is None else name
        if not is_safe_daily_name(date):
            raise ToolError("invalid daily date name (expected YYYY-MM-DD)")
        return _read_capped(ctx, _daily_path(ctx, date), Kind.DAILY)
    if source == "note":
        if name is None:
            raise ToolError("note requires name")
        return _read_capped(ctx, _note_path(ctx, name, "invalid note name"), Kind.NOTE)
    if source == "list":
        return memory_list(ctx)
    raise ToolError(f"unknown source: {source}")


# -- memory_search ----------------------------------------------------------------------

@dataclass
class SearchHit:
    path: str
    matched_terms: list[str]
    total_hits: int
    body: str
    filename_only: bool
    date: str | None
    is_memory_md: bool


def _ascii_lower(text: str) -> str:
    return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in text)


def _cmp(a: SearchHit, b: SearchHit) -> int:
    def cmp(x: object, y: object) -> int:
        return (x > y) - (x < y)  # type: ignore[operator]

    return (cmp(b.is_memory_md, a.is_memory_md)
            or cmp(len(b.matched_terms), len(a.matched_terms))
            or cmp(a.filename_only, b.filename_only)
            or cmp(b.total_hits, a.total_hits)
            or cmp((b.date is not None, b.date or ""), (a.date is not None, a.date or ""))
            or cmp(a.path.split("/"), b.path.split("/")))


def search(ctx: ToolContext, query: str) -> tuple[list[tuple[str, int]], list[SearchHit]]:
    """zerostack's `Mem::search`: ranked hits plus each term's matching-line count."""
    terms: list[str] = []
    for t in split_whitespace(query):
        if not any(_ascii_lower(x) == _ascii_lower(t) for x in terms):
            terms.append(t)
    if not terms:
        return [], []
    matchers = [re.compile(re.escape(t), re.IGNORECASE) for t in terms]
    counts = [0] * len(terms)
    hits: list[SearchHit] = []
    for path, is_daily, content in _searched_files(ctx):
        name = posixpath.basename(path)
        lines = rust_lines(content)
        term_hit = [False] * len(terms)
        hit_lines: list[int] = []
        for i, line in enumerate(lines):
            found = False
            for ti, m in enumerate(matchers):
                if m.search(line):
                    found = True
                    term_hit[ti] = True
                    counts[ti] += 1
            if found:
                hit_lines.append(i)
        matched = [t for t, hit in zip(terms, term_hit, strict=True) if hit]
        windows: list[list[int]] = []
        for i in hit_lines:
            lo, hi = max(i - CONTEXT, 0), min(i + CONTEXT, max(len(lines) - 1, 0))
            if windows and lo <= windows[-1][1] + 1:
                windows[-1][1] = max(windows[-1][1], hi)
                continue
            if len(windows) >= MAX_BLOCKS:
                break
            windows.append([lo, hi])
        date = name[:-3] if is_daily else None
        is_memory_md = name == "MEMORY.md"
        if windows:
            body = "".join("".join(f"{ln}\n" for ln in lines[lo:hi + 1]) + "…\n"
                           for lo, hi in windows)
            hits.append(SearchHit(path, matched, len(hit_lines), body.rstrip(_WS_CHARS),
                                  False, date, is_memory_md))
            continue
        name_terms = [t for t, m in zip(terms, matchers, strict=True) if m.search(name)]
        if name_terms:
            preview = [ln for ln in lines if ln.strip(_WS_CHARS)][:3]
            hits.append(SearchHit(path, name_terms, 0,
                                  "(filename match)\n" + "\n".join(preview), True, date,
                                  is_memory_md))
    hits.sort(key=functools.cmp_to_key(_cmp))
    return list(zip(terms, counts, strict=True)), hits


def render(terms: list[tuple[str, int]], hits: list[SearchHit],
           max_bytes: int = MAX_INJECT_BYTES) -> str:
    """Summary line, then the best blocks that fit `max_bytes - 256`, then the hard cap."""
    blocks = [f"{h.path}  [matched: {', '.join(h.matched_terms) or '—'}]\n{h.body}"
              for h in hits]
    budget = max(max_bytes - 256, 0)
    included: list[str] = []
    used = 0
    for block in blocks:
        add = len(block.encode()) + (2 if included else 0)
        if included and used + add > budget:
            break
        used += add
        included.append(block)
    shown, omitted = len(included), len(hits) - len(included)
    out = (f"Searched {len(terms)} term{'' if len(terms) == 1 else 's'}: "
           f"{' '.join(f'{t}({c})' for t, c in terms)} across {len(hits)} "
           f"file{'' if len(hits) == 1 else 's'}. Showing top {shown} by relevance.")
    out += "\n\n" + "\n\n".join(included)
    if omitted:
        out += f"\n\n…[search truncated, {omitted} more file{'' if omitted == 1 else 's'} omitted]"
    return truncate_cjk(out, max_bytes, READ_MARKER)


def memory_search(ctx: ToolContext, query: str) -> str:
    terms, hits = search(ctx, query)
    if not hits:
        return f"No matches for '{query}'."
    return render(terms, hits)


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
        date = _today(ctx) if name is None else name
        if not is_safe_daily_name(date):
            raise ToolError(
                "invalid daily date name (expected YYYY-MM-DD: digits and hyphens only)")
        path = _daily_path(ctx, date)
    elif target == "note":
        path = _note_path(ctx, name, BAD_NOTE)
    else:
        raise _unknown_target(target)
    if old_str is None:
        if target != "note":
            raise ToolError("memory_edit without old_str deletes a whole note; it is only "
                            "allowed for target=note, not long_term/scratchpad/daily")
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

def _schema(properties: dict, required: list[str]) -> dict:
    return {"type": "object", "properties": properties, "required": required,
            "additionalProperties": False}


_TARGET = {"type": "string", "enum": list(TARGETS), "description": TARGET_HELP}


@tool("memory_write", dialect="zerostack", layouts=LAYOUTS, destructive=True,
      title="Write memory",
      description=(
          "Persist durable memory to disk. target=long_term writes curated facts/preferences/"
          "decisions to MEMORY.md (always loaded next session), one fact per line; long_term "
          "appends are deduplicated (whitespace-insensitive) so a line already present is "
          "skipped. target=scratchpad maintains a per-project checklist (use `- [ ]` items; "
          "open ones are auto-injected, mode=overwrite to rewrite the list). target=daily "
          "appends to today's running log. target=note saves reference material to "
          "notes/<name>.md (find it later with memory_search, then read it in full with "
          "memory_read). Prefer long_term for things that should always be remembered."),
      schema=_schema({
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
      description=(
          "Read a memory file: source=long_term (MEMORY.md), scratchpad, daily "
          "(name=YYYY-MM-DD, omit for today), note (name=<stem>), or list (enumerate "
          "everything)."),
      schema=_schema({
          "source": {"type": "string", "enum": list(SOURCES),
                     "description": SOURCE_HELP},
          "name": {"type": "string", "description": "note stem or YYYY-MM-DD"},
      }, ["source"]),
      enum_errors={"source": "unknown source: {value}"})
def memory_read_tool(ctx: ToolContext, args: dict) -> str:
    return memory_read(ctx, args["source"], args.get("name"))


@tool("memory_search", dialect="zerostack", layouts=LAYOUTS, read_only=True, idempotent=True,
      title="Search memory",
      description=(
          "Case-insensitive keyword search across all memory files (long-term, notes, daily "
          "logs, including older ones). Space-separated words are treated as separate terms; "
          "a line matches if it contains ANY term, and files matching more distinct terms "
          "rank higher. Matches are returned with surrounding context and the file path; to "
          "read a relevant file in full, follow up with memory_read. Use to recall older "
          "context that is not auto-injected. If a search returns 'No matches', try again "
          "with synonyms, broader concepts, or shorter keywords."),
      schema=_schema({"query": {"type": "string", "description": QUERY_HELP}}, ["query"]))
def memory_search_tool(ctx: ToolContext, args: dict) -> str:
    return memory_search(ctx, args["query"])


@tool("memory_edit", dialect="zerostack", layouts=LAYOUTS, destructive=True,
      title="Edit memory",
      description=(
          "Replace a unique substring in a memory file in place. target=long_term "
          "(MEMORY.md), scratchpad, daily (a day's log; pass name=YYYY-MM-DD to edit an "
          "earlier day, defaults to today), or note (name=<stem>). old_str must occur "
          "EXACTLY once in the target file, matched literally (no fuzzy matching); if it "
          "matches zero or multiple times the edit fails and nothing is written, so include "
          "enough surrounding text to make it unique. The match is replaced with new_str "
          "verbatim, with no newline cleanup: set new_str to an empty string to delete the "
          "matched text, and include the trailing newline in old_str to delete a whole line. "
          "Omit old_str entirely to delete a whole note file (requires target=note and "
          "name=<stem>); omitting old_str for long_term/scratchpad/daily is rejected and "
          "changes nothing. Use memory_write to append or overwrite; use this to surgically "
          "fix or remove existing content."),
      schema=_schema({
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
