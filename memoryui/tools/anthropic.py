"""Claude's memory tool (`memory_20250818`) served from the scope's memory folder.

The model sees a private `/memories` directory; memoryui maps it onto the folder that
holds the scope's memory in the workspace layout (duragent `agents/{a}/memory/`, dagu
`memory/dags/{dag}/`, zerostack `projects/{slug}/`, jutul `workspaces/{h}/memory/`), so
what Claude writes is the same markdown the team lead curates. Result and error texts are
those of the Anthropic SDK's reference implementation (`BetaLocalFilesystemMemoryTool`),
because that is what models are tuned against. Deliberate differences:

- `create` refuses to overwrite an existing file (`File {path} already exists`), as the
  reference implementation does (its docs say "create or overwrite"): a model cannot wipe
  a curated file by accident, and `str_replace` or delete + create remain available.
- Folders are listed with the nominal size `4K` (what the reference prints for a 4096-byte
  directory): a folder's on-disk size is filesystem noise and git does not track it.
- Symbolic links are never followed: listings skip them, paths through them are refused.
- Letta's argument names are accepted too: `old_string`/`new_string`, `file_path`, and
  `reason`, which becomes the commit message. `new_str` may be omitted (deletes `old_str`).

Every change is one commit authored by the calling agent (tool `memory`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memoryui.store import ABSENT, Conflict, NotFound, walk
from memoryui.tools.anthropic_paths import Target, missing
from memoryui.tools.registry import ToolContext, ToolError, tool

MAX_LINES = 999_999
LINE_NUMBER_WIDTH = len(str(MAX_LINES))
DIR_SIZE = "4K"

COMMANDS = ["view", "create", "str_replace", "insert", "delete", "rename"]

_STR = {"type": "string"}
SCHEMA: dict = {
    "type": "object",
    "properties": {
        "command": {"type": "string", "enum": COMMANDS,
                    "description": "view a file or folder; create a new file; str_replace "
                                   "text that occurs exactly once; insert lines after a line "
                                   "number; delete a file or folder; rename (move) a file "
                                   "or folder."},
        "path": {**_STR, "description": "Path under /memories, e.g. /memories/progress.md "
                                        "(view, create, str_replace, insert, delete)."},
        "view_range": {"type": "array", "items": {"type": "integer"},
                       "description": "view: optional [start, end] 1-based inclusive line "
                                      "range of a file; end -1 means to the end."},
        "file_text": {**_STR, "description": "create: the content of the new file."},
        "old_str": {**_STR, "description": "str_replace: text that must appear exactly once."},
        "new_str": {**_STR, "description": "str_replace: replacement text (default empty)."},
        "insert_line": {"type": "integer",
                        "description": "insert: the line after which to insert (0 = top)."},
        "insert_text": {**_STR, "description": "insert: the text to insert."},
        "old_path": {**_STR, "description": "rename: the current path."},
        "new_path": {**_STR, "description": "rename: the new path (must not exist)."},
        "old_string": {**_STR, "description": "Alias of old_str (Letta)."},
        "new_string": {**_STR, "description": "Alias of new_str (Letta)."},
        "file_path": {**_STR, "description": "Alias of path (Letta)."},
        "reason": {**_STR, "description": "Why you make this change; kept as the commit "
                                          "message in the memory's history."},
    },
    "required": ["command"],
    "additionalProperties": False,
}

DESCRIPTION = (
    "Your persistent memory directory /memories, kept across conversations and reviewed by "
    "your team. ALWAYS view /memories before starting a task to pick up earlier progress "
    "and knowledge; record progress, decisions and lessons as you go, since your context "
    "may be reset at any time. Keep files up to date, coherent and organized: edit with "
    "str_replace or insert, rename or delete files that are no longer relevant, and do not "
    "create new files unless necessary. Commands: view, create, str_replace, insert, "
    "delete, rename; all paths start with /memories."
)


def format_size(size: int) -> str:
    """The reference implementation's size format: 0B, 123B, 1.5K, 4K, 2.3M."""
    if size == 0:
        return "0B"
    units = ["B", "K", "M", "G"]
    i = min((size.bit_length() - 1) // 10, len(units) - 1)
    value = size / (1024**i)
    return f"{int(value)}{units[i]}" if value == int(value) else f"{value:.1f}{units[i]}"


def numbered(lines: list[str], start: int) -> str:
    return "\n".join(f"{str(n).rjust(LINE_NUMBER_WIDTH)}\t{line}"
                     for n, line in enumerate(lines, start))


def _message(args: dict, default: str) -> str:
    reason = args.get("reason")
    if isinstance(reason, str) and reason.strip():
        return reason.strip()
    return default


# `call_tool` has checked every argument's type against SCHEMA before a command runs: a
# string property is a str, `insert_line` an int.
def _alias(args: dict, name: str, alias: str) -> str | None:
    value, other = args.get(name), args.get(alias)
    if value is not None and other is not None and value != other:
        raise ToolError(f"'{name}' and its alias '{alias}' disagree; send only one")
    return value if value is not None else other


def _required(args: dict, name: str, command: str) -> Any:
    if args.get(name) is None:
        raise ToolError(f"missing required field '{name}' for command '{command}'")
    return args[name]


# -- commands -------------------------------------------------------------------------

def view(ctx: ToolContext, args: dict) -> str:
    t = Target(ctx, _alias(args, "path", "file_path"))
    if t.full.is_dir() or (t.is_root and not t.full.exists()):
        return _listing(t)
    if not t.is_file():
        raise missing(t.path)
    text = ctx.store.read(t.ws)
    if text is None:
        raise ToolError(f"The file {t.path} no longer exists (may have been deleted or "
                        "renamed concurrently).", "not_found", 404)
    lines = text.split("\n")
    if len(lines) > MAX_LINES:
        raise ToolError(f"File {t.path} exceeds maximum line limit of 999,999 lines.")
    start = 1
    rng = args.get("view_range")
    if rng and len(rng) == 2:
        first = max(1, rng[0]) - 1
        end = len(lines) if rng[1] == -1 else rng[1]
        lines = lines[first:end]
        start = first + 1
    return f"Here's the content of {t.path} with line numbers:\n" + numbered(lines, start)


def _listing(t: Target) -> str:
    # The store's one walker: hidden names and symbolic links are never listed.
    items = [(DIR_SIZE, e.path + "/") if e.folder else (format_size(e.size), e.path)
             for e in walk.walk(t.full, depth=2, folders=True)]
    header = (f"Here're the files and directories up to 2 levels deep in {t.path}, "
              "excluding hidden items:")
    lines = [f"{DIR_SIZE}\t{t.path}"] + [f"{size}\t{t.path}/{rel}" for size, rel in items]
    return header + "\n" + "\n".join(lines)


def create(ctx: ToolContext, args: dict) -> str:
    t = Target(ctx, _alias(args, "path", "file_path"))
    text: str = _required(args, "file_text", "create")
    exists = ToolError(f"File {t.path} already exists", "conflict", 409)
    if t.is_root or t.exists():
        raise exists
    blocker = t.file_ancestor()
    if blocker:
        raise ToolError(f"Cannot create {t.path}: {blocker} is a file")
    with t.refusals():
        try:
            ctx.store.write(t.ws, text, expect=ABSENT,
                            message=_message(args, f"memory create: {t.ws}"), **_by(ctx))
        except Conflict:
            raise exists from None
    return f"File created successfully at: {t.path}"


def _existing_file(t: Target) -> None:
    if not t.exists():
        raise missing(t.path)
    if not t.is_file():
        raise ToolError(f"The path {t.path} is not a file.")


def str_replace(ctx: ToolContext, args: dict) -> str:
    t = Target(ctx, _alias(args, "path", "file_path"))
    old = _alias(args, "old_str", "old_string")
    if old is None:
        raise ToolError("missing required field 'old_str' for command 'str_replace'")
    new = _alias(args, "new_str", "new_string")
    new = "" if new is None else new
    _existing_file(t)
    snippet: list[str] = []

    def edit(content: str | None) -> str:
        if content is None:
            raise missing(t.path)
        count = content.count(old)
        if count == 0:
            raise ToolError(f"No replacement was performed, old_str `{old}` did not appear "
                            f"verbatim in {t.path}.")
        if count > 1:
            lines, start = [], 0
            while (pos := content.find(old, start)) != -1:
                lines.append(content[:pos].count("\n") + 1)
                start = pos + 1
            raise ToolError(f"No replacement was performed. Multiple occurrences of old_str "
                            f"`{old}` in lines: {', '.join(map(str, lines))}. Please ensure "
                            "it is unique")
        changed = content[: content.find(old)].count("\n")
        result = content.replace(old, new)
        new_lines = result.split("\n")
        first, end = max(0, changed - 2), min(len(new_lines), changed + 3)
        snippet.append(numbered(new_lines[first:end], first + 1))
        return result

    _update(t, edit, _message(args, f"memory str_replace: {t.ws}"))
    return ("The memory file has been edited. Here is the snippet showing the change "
            "(with line numbers):\n" + snippet[0])


def insert(ctx: ToolContext, args: dict) -> str:
    t = Target(ctx, _alias(args, "path", "file_path"))
    line: int = _required(args, "insert_line", "insert")
    text: str = _required(args, "insert_text", "insert")
    _existing_file(t)

    def edit(content: str | None) -> str:
        if content is None:
            raise missing(t.path)
        lines = content.split("\n")  # "\n" only: CRs, U+2028 and form feeds stay put
        if lines[-1] == "":
            lines.pop()  # the reference's `_split_lines_keeping_cr`
        if line < 0 or line > len(lines):
            raise ToolError(f"Invalid `insert_line` parameter: {line}. It should be within "
                            f"the range [0, {len(lines)}].")
        lines.insert(line, text.rstrip("\n"))
        result = "\n".join(lines)
        return result if result.endswith("\n") else result + "\n"

    _update(t, edit, _message(args, f"memory insert: {t.ws}"))
    return f"The file {t.path} has been edited."


def _update(t: Target, fn: Callable[[str | None], str], message: str) -> None:
    with t.refusals():
        t.ctx.store.update(t.ws, fn, message=message, **_by(t.ctx))


def _by(ctx: ToolContext) -> dict[str, Any]:
    """Who a commit of this tool is by: the agent's actor and trailers, and the tool."""
    return {"actor": ctx.actor, "trailers": ctx.trailers, "tool": "memory"}


def delete(ctx: ToolContext, args: dict) -> str:
    t = Target(ctx, _alias(args, "path", "file_path"))
    if t.is_root:
        raise ToolError("Cannot delete the /memories directory itself")
    message = _message(args, f"memory delete: {t.ws}")
    gone = ToolError(f"The path {t.path} does not exist", "not_found", 404)
    with t.refusals():
        try:
            if t.full.is_file():
                ctx.store.delete(t.ws, message=message, **_by(ctx))
            elif t.full.is_dir():
                ctx.store.delete_tree(t.ws, message=message, **_by(ctx))
                _remove_empty_dirs(t.full)
            else:
                raise gone
        except NotFound:
            raise gone from None
    return f"Successfully deleted {t.path}"


def _remove_empty_dirs(folder: Path) -> None:
    """Folders git does not track (left empty) go too, as `rm -r` would remove them."""
    if not folder.is_dir() or folder.is_symlink():
        return
    inner = [folder / e.path for e in walk.walk(folder, folders=True) if e.folder]
    for path in [*reversed(inner), folder]:  # deepest first
        try:
            os.rmdir(path)
        except OSError:
            pass


def rename(ctx: ToolContext, args: dict) -> str:
    src = Target(ctx, args.get("old_path"), "old_path")
    dst = Target(ctx, args.get("new_path"), "new_path")
    if src.is_root:
        raise ToolError("Cannot rename the /memories directory itself")
    if dst.is_root or dst.full.exists():
        raise ToolError(f"The destination {dst.path} already exists", "conflict", 409)
    if not src.full.exists():
        raise ToolError(f"The path {src.path} does not exist", "not_found", 404)
    if dst.parts[: len(src.parts)] == src.parts:
        raise ToolError(f"Cannot move {src.path} into itself ({dst.path})")
    blocker = dst.file_ancestor()
    if blocker:
        raise ToolError(f"Cannot rename to {dst.path}: {blocker} is a file")
    message = _message(args, f"memory rename: {src.ws} -> {dst.ws}")
    with src.refusals():
        try:
            if src.full.is_file():
                ctx.store.rename(src.ws, dst.ws, message=message, **_by(ctx))
            elif src.full.is_dir():
                if ctx.store.list_files(src.ws):
                    ctx.store.rename_tree(src.ws, dst.ws, message=message, **_by(ctx))
                    _remove_empty_dirs(src.full)
                else:  # nothing git tracks: move the empty folder itself
                    dst.full.parent.mkdir(parents=True, exist_ok=True)
                    os.rename(src.full, dst.full)
            else:
                raise ToolError(f"The path {src.path} does not exist", "not_found", 404)
        except Conflict:
            raise ToolError(f"The destination {dst.path} already exists", "conflict",
                            409) from None
        except NotFound:
            raise ToolError(f"The path {src.path} does not exist", "not_found", 404) from None
    return f"Successfully renamed {src.path} to {dst.path}"


_HANDLERS = {"view": view, "create": create, "str_replace": str_replace, "insert": insert,
             "delete": delete, "rename": rename}


@tool("memory", dialect="anthropic", description=DESCRIPTION, schema=SCHEMA,
      layouts={"duragent", "dagu", "zerostack", "jutul"}, destructive=True,
      title="Memory directory (/memories)")
def memory(ctx: ToolContext, args: dict) -> str:
    """Dispatch on `command`, as Claude's client-side memory tool does."""
    return _HANDLERS[args["command"]](ctx, args)
