"""jutul-agent's `remember {content, title, kind}`: one note per fact plus its index line.

Slug, front matter, index upsert, hook and result text follow jutul-agent's
`agent/memory.py` (`make_remember_tool`, reference/seed-systems.md section 2) exactly.
The scope is the workspace hash. Deliberate differences:

- The note path in the result is workspace-relative (``remembered `User role` →
  workspaces/3f2a…/memory/user-role.md (kind=user)``) where jutul-agent prints an
  absolute path.
- Two different titles with the same slug do not overwrite each other: the second is
  refused with 409 `conflict` unless its title equals the existing note's title (its
  `description:` front-matter line). A note without that line is never overwritten.
- A title with a line break is refused (it would break the one-line index entry and the
  front matter); content over MAX_CONTENT_BYTES is refused with 413 (jutul-agent has
  no cap of its own).

The note and the index are two files: with immediate commits they are two commits, both
attributed to the agent with tool `remember`; the server's deferred committer groups
them into one.
"""

from __future__ import annotations

import re

from memoryui.store import Kind
from memoryui.tools.registry import ToolContext, ToolError, object_schema, tool

LAYOUTS = {"jutul"}
MAX_CONTENT_BYTES = 256 * 1024
VALID_KINDS = ("user", "project", "simulator", "preference", "reference")
DEFAULT_KIND = "project"

INDEX_SEED = """# Memory index

This file is the always-loaded index. Each entry below should be **one
line** pointing to a sibling note file in this directory:

- `<title>` — one-line hook (file: `<file.md>`)

The agent maintains this file and the linked notes via the `read_file`,
`write_file`, and `edit_file` tools.

(Empty for now; add entries as durable facts come up.)
"""


def slugify(title: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", title.strip().lower()).strip("-")
    return (slug or "note")[:48]


def index_hook(content: str) -> str:
    """First non-blank line of the body, whitespace collapsed, cut at 100 chars + `…`."""
    first = next((line.strip() for line in content.splitlines() if line.strip()), "")
    first = re.sub(r"\s+", " ", first)
    return first[:100] + ("…" if len(first) > 100 else "")


def note_text(name: str, title: str, kind: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: {title}\ntype: {kind}\n---\n\n{body}\n"


def upsert_index(text: str | None, title: str, filename: str, hook: str) -> str:
    """Drop every line naming the file, then append its entry (an update moves to the end)."""
    text = INDEX_SEED if text is None else text
    marker = f"(file: `{filename}`)"
    entry = f"- `{title}` — {hook} {marker}"
    lines = [line for line in text.splitlines() if marker not in line]
    return "\n".join(lines).rstrip() + "\n" + entry + "\n"


def front_matter_title(text: str) -> str | None:
    """The `description:` value of a note's front matter (jutul's title), if any."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return None
    for line in lines[1:]:
        if line.strip() == "---":
            return None
        if line.startswith("description:"):
            return line[len("description:"):].strip()
    return None


def remember(ctx: ToolContext, content: str, title: str, kind: str = DEFAULT_KIND) -> str:
    title = title.strip()
    if len(title.splitlines()) > 1:
        raise ToolError("title must be a single line: it becomes the note's index entry")
    size = len(content.encode())
    if size > MAX_CONTENT_BYTES:
        raise ToolError(f"content is {size} bytes; the limit is {MAX_CONTENT_BYTES} bytes "
                        "(256 KiB): split it into smaller notes", "payload_too_large", 413)
    kind = kind.strip().lower()
    if kind not in VALID_KINDS:
        kind = DEFAULT_KIND
    name = slugify(title)
    filename = f"{name}.md"
    path = ctx.store.path_for(Kind.NOTE, ctx.scope, name)
    body = content.strip()

    def write_note(old: str | None) -> str:
        if old is not None:
            existing = front_matter_title(old)
            if existing != title:
                owner = f"`{existing}`" if existing is not None else "a note without a title"
                raise ToolError(
                    f"{path} already holds {owner}; the title `{title}` maps to the same "
                    f"file name `{filename}`. Use the same title to update that note, or a "
                    "different title for a new one.", "conflict", 409)
        return note_text(name, title, kind, body)

    ctx.store.update(path, write_note, actor=ctx.actor, trailers=ctx.trailers,
                     tool="remember")
    ctx.store.update(ctx.store.path_for(Kind.MEMORY, ctx.scope),
                     lambda old: upsert_index(old, title, filename, index_hook(body)),
                     actor=ctx.actor, trailers=ctx.trailers, tool="remember")
    return f"remembered `{title}` → {path} (kind={kind})"


@tool("remember", dialect="jutul", layouts=LAYOUTS, destructive=True, idempotent=True,
      title="Remember a fact",
      description=(
          "Save one durable fact to workspace memory (persists across sessions). Use this "
          "for things worth knowing next time: the user's role/goal, confirmed simulator "
          "quirks or calling conventions, stable paths the user pointed at, and corrections "
          "(capture the rule *and why*). One fact per call. Do not store credentials or "
          "transient task state. Calling it again with the same title replaces that note."),
      schema=object_schema({
          "content": {"type": "string",
                      "description": "The fact, in a few sentences of Markdown. For a "
                                     "correction, include why it matters and how to apply "
                                     "it."},
          "title": {"type": "string",
                    "description": "Short human-readable title (also used to name the "
                                   "file)."},
          # No "enum": jutul-agent maps any other value to `project` silently.
          "kind": {"type": "string", "default": DEFAULT_KIND,
                   "description": "One of user, project, simulator, preference, reference. "
                                  "Defaults to project."},
      }, ["content", "title"]))
def remember_tool(ctx: ToolContext, args: dict) -> str:
    return remember(ctx, args["content"], args["title"], args.get("kind", DEFAULT_KIND))
