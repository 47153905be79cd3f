"""Duragent's memory tools: `recall`, `remember`, `reflect`, `update_world` and `memory`.

Texts and formats follow giosakti/duragent (`memory/mod.rs`, `tools/builtins/memory.rs`;
reference/seed-systems.md section 1) byte for byte, with these deliberate differences:

- Paths inside results are workspace-relative (`Remembered. Written to
  agents/ops-bot/memory/daily/2026-02-12.md`) where Duragent prints absolute paths.
- The daily header `# YYYY-MM-DD` is written once per file (Duragent's HEAD repeats it
  before every entry); recall returns files raw, so files that have the bug read fine.
- `recall` clamps `days` to MAX_RECALL_DAYS; `days: 0` is valid as in Duragent (world
  knowledge and MEMORY.md, no daily logs); a negative `days` is refused.
- The listed `memory` tool admits both argument forms: Duragent's `action` and Claude's
  `command` (memory_20250818, dispatched to tools/anthropic.py). Its schema is one flat
  object with the properties of both, because the Anthropic API refuses `anyOf`/`oneOf`
  at the top of an input schema and OpenAI wants a plain object too; which form is used
  (and what it requires) is checked when the call arrives.
- An empty (after sanitising) world topic is refused instead of writing `.md`.
- Content over MAX_CONTENT_BYTES is refused (413): Duragent has no cap of its own.

Errors. Duragent's agent loop shows the model `Tool execution failed: failed to parse
tool arguments: {text}` for argument errors; over HTTP the error envelope replaces that
wrapper, so `message` is the bare `{text}` (e.g. `'content' is required for remember
action`) and `code` `invalid_arguments` stands for "failed to parse tool arguments". An
unknown action is not an error in Duragent (a `success: false` result); here it is a 400
whose message is Duragent's text, `Unknown action: 'x'. Use: recall, remember, reflect,
update_world`.
"""

from __future__ import annotations

import datetime as dt
import posixpath
from typing import Protocol

from memoryui.store import InvalidName, Kind
from memoryui.store.names import sanitize_world_topic
from memoryui.tools import anthropic
from memoryui.tools.registry import ToolContext, ToolError, check_args, object_schema, tool

LAYOUTS = {"duragent"}
DEFAULT_DAYS = 3
MAX_RECALL_DAYS = 90
MAX_CONTENT_BYTES = 256 * 1024
ACTIONS = ("recall", "remember", "reflect", "update_world")
NO_MEMORIES = "No memories found"
SECTION_SEP = "\n\n---\n\n"

_CLAMP_NOTE = f" Values above {MAX_RECALL_DAYS} are clamped to {MAX_RECALL_DAYS}."


# -- the four actions (plain functions shared by both tool surfaces) ------------------

class Memory(Protocol):
    """What `recall` reads: the Store, or a Snapshot of an old commit (tools/context.py)."""

    def path_for(self, kind: Kind | str, scope: str | None = None,
                 name: str | None = None) -> str: ...

    def read(self, path: str) -> str | None: ...

    def read_folder(self, prefix: str, suffix: str = ".md") -> list[tuple[str, str]]: ...


def recall(ctx: ToolContext, days: int = DEFAULT_DAYS) -> str:
    """`recall_from` the caller's store and scope, today by the caller's clock."""
    return recall_from(ctx.store, ctx.scope, ctx.now().date(), days)


def recall_from(store: Memory, scope: str, today: dt.date, days: int = DEFAULT_DAYS) -> str:
    """World knowledge, the agent's MEMORY.md and the last `days` daily logs, today first."""
    if days < 0:
        raise ToolError(f"days must be 0 or more (got {days}); 0 loads no daily logs")
    days = min(days, MAX_RECALL_DAYS)
    sections = []
    world = _world_facts(store)
    if world:
        sections.append(f"# World Knowledge\n\n{world}")
    memory = store.read(store.path_for(Kind.MEMORY, scope))
    if memory:
        sections.append(f"# Your Memory\n\n{memory}")
    daily = []
    for i in range(days):
        text = store.read(store.path_for(Kind.DAILY, scope, _day(today - dt.timedelta(i))))
        if text is not None:
            daily.append(text)
    if daily:
        sections.append("# Recent Experiences\n\n" + SECTION_SEP.join(daily))
    return SECTION_SEP.join(sections) or NO_MEMORIES


def remember(ctx: ToolContext, content: str, tool_name: str = "remember") -> str:
    """Append `\\n## HH:MM\\n\\n{content}\\n` to today's log; the date header only once."""
    if content == "":
        raise ToolError("content is required")
    _check_size(content)
    now = ctx.now()
    path = ctx.store.path_for(Kind.DAILY, ctx.scope, _day(now))
    ctx.store.append(path, f"\n## {now:%H:%M}\n\n{content}\n", header=f"# {_day(now)}\n",
                     actor=ctx.actor, trailers=ctx.trailers, tool=tool_name)
    return f"Remembered. Written to {path}"


def reflect(ctx: ToolContext, content: str | None, tool_name: str = "reflect") -> str:
    """No content: read MEMORY.md. Content (even empty): replace the whole file."""
    path = ctx.store.path_for(Kind.MEMORY, ctx.scope)
    if content is None:
        current = ctx.store.read(path)
        if not current:
            return "MEMORY.md is empty. Call reflect with content to create it."
        return f"Current MEMORY.md:\n\n{current}"
    _check_size(content)
    ctx.store.write(path, content, actor=ctx.actor, trailers=ctx.trailers, tool=tool_name)
    return f"Reflected. Updated {path}"


def update_world(ctx: ToolContext, topic: str, content: str,
                 tool_name: str = "update_world") -> str:
    """Replace `memory/world/{sanitised topic}.md` (shared by every agent: needs the grant)."""
    try:
        safe = sanitize_world_topic(topic)
    except InvalidName as exc:
        raise ToolError(f"invalid topic {topic!r}: {exc}") from None
    _check_size(content)
    ctx.require_world()
    path = ctx.store.path_for(Kind.WORLD, None, safe)
    ctx.store.write(path, content, actor=ctx.actor, trailers=ctx.trailers, tool=tool_name)
    return f"Updated world knowledge at {path}"


def _world_facts(store: Memory) -> str:
    """Every `*.md` directly in the world folder, sorted by file name, as `## {stem}`."""
    folder = posixpath.dirname(store.path_for(Kind.WORLD, None, "topic"))
    return "\n\n".join(f"## {posixpath.basename(path)[:-3]}\n\n{text}"
                       for path, text in store.read_folder(folder, ".md"))


def _day(when: dt.date) -> str:
    return when.strftime("%Y-%m-%d")


def _check_size(content: str) -> None:
    size = len(content.encode())
    if size > MAX_CONTENT_BYTES:
        raise ToolError(f"content is {size} bytes; the limit is {MAX_CONTENT_BYTES} bytes "
                        "(256 KiB): split it into smaller pieces", "payload_too_large", 413)


# -- the seed's four tools ----------------------------------------------------------

# The descriptions are Duragent's own, word for word.
RECALL_HELP = (
    "Load your memory context (world knowledge, your long-term memory, recent "
    "experiences). Call it when starting a new session or when you need context "
    "about the user, their projects, or prior conversations; do not call it on "
    f"every message. `days` above {MAX_RECALL_DAYS} is clamped to {MAX_RECALL_DAYS}.")
REMEMBER_HELP = (
    "Record an experience or observation to today's daily log. Use it after learning "
    "something important about the user or project.")
REFLECT_HELP = (
    "Read or update your long-term MEMORY.md. Call without content to read current "
    "memory, then call again with content to write updates. Use it at the end of "
    "substantial sessions to consolidate learnings: always read first, then write, "
    "because the content replaces the whole file.")
UPDATE_WORLD_HELP = (
    "Write shared world knowledge for a topic (visible to all agents). Replaces "
    "existing content for the topic. Use it when discovering facts relevant to all "
    "agents.")


@tool("recall", dialect="duragent", layouts=LAYOUTS, read_only=True, idempotent=True,
      title="Recall memory",
      description=RECALL_HELP,
      schema=object_schema({"days": {
          "type": "integer", "minimum": 0, "maximum": MAX_RECALL_DAYS, "default": DEFAULT_DAYS,
          "description": "How many days of daily logs to load (default: 3; 0: none)."
                         + _CLAMP_NOTE,
      }}, []))
def recall_tool(ctx: ToolContext, args: dict) -> str:
    return recall(ctx, args.get("days", DEFAULT_DAYS))


@tool("remember", dialect="duragent", layouts=LAYOUTS, title="Remember",
      description=REMEMBER_HELP,
      schema=object_schema({"content": {
          "type": "string",
          "description": "What to remember (will be appended to today's daily file)",
      }}, ["content"]))
def remember_tool(ctx: ToolContext, args: dict) -> str:
    return remember(ctx, args["content"])


@tool("reflect", dialect="duragent", layouts=LAYOUTS, destructive=True, idempotent=True,
      title="Reflect on long-term memory",
      description=REFLECT_HELP,
      schema=object_schema({"content": {
          "type": "string",
          "description": "New content for MEMORY.md (replaces existing). Omit to read "
                         "current memory first.",
      }}, []))
def reflect_tool(ctx: ToolContext, args: dict) -> str:
    return reflect(ctx, args.get("content"))


@tool("update_world", dialect="duragent", layouts=LAYOUTS, destructive=True, idempotent=True,
      title="Update world knowledge",
      description=UPDATE_WORLD_HELP,
      schema=object_schema({
          "topic": {"type": "string",
                    "description": "Topic file to update (e.g., 'people', 'systems', "
                                   "'preferences')"},
          "content": {"type": "string",
                      "description": "Full content for the topic file (replaces existing)"},
      }, ["topic", "content"]))
def update_world_tool(ctx: ToolContext, args: dict) -> str:
    return update_world(ctx, args["topic"], args["content"])


# -- the current code's single action-based tool ----------------------------------------

ACTION_SCHEMA = object_schema({
    "action": {"type": "string", "enum": list(ACTIONS), "description": "Action to perform"},
    "days": {"type": "integer", "minimum": 0, "maximum": MAX_RECALL_DAYS,
             "description": "(recall) How many days of daily logs to load (default: 3; 0: "
                            "none)." + _CLAMP_NOTE},
    "content": {"type": "string",
                "description": "(remember) What to record. (reflect) New content for "
                               "MEMORY.md — omit to read current memory first."},
    "topic": {"type": "string",
              "description": "(update_world) Topic file to update (e.g., 'people', "
                             "'systems', 'preferences')"},
}, ["action"])
_ACTION_ERRORS = {"action": "Unknown action: '{value}'. Use: " + ", ".join(ACTIONS)}

# What the layout lists: either form validates against it (see the module docstring).
MEMORY_SCHEMA = object_schema({**ACTION_SCHEMA["properties"], **anthropic.SCHEMA["properties"]}, [])
MEMORY_SCHEMA["properties"]["command"] = {
    **anthropic.SCHEMA["properties"]["command"],
    "description": "Claude's memory tool (instead of `action`): "
                   + anthropic.SCHEMA["properties"]["command"]["description"]}


@tool("memory", dialect="duragent", layouts=LAYOUTS, destructive=True,
      title="Memory (Duragent)",
      description=(
          "Manage your persistent memory. Actions: 'recall' (load world knowledge, long-term "
          "memory, recent experiences), 'remember' (record to daily log), 'reflect' "
          "(read/update MEMORY.md), 'update_world' (write shared world knowledge). Call "
          "'recall' when starting a new session or when you need context about the user, "
          "their projects, or prior conversations. Do not call it on every message. "
          "Send `action` with its fields; Claude's memory commands (`command` with /memories "
          "paths) work here too."),
      schema=MEMORY_SCHEMA, enum_errors=_ACTION_ERRORS)
def memory_tool(ctx: ToolContext, args: dict) -> str:
    if "command" in args:  # reached only if called directly: the registry dispatches it
        return anthropic.memory(ctx, check_args(anthropic.SCHEMA, args))
    if "action" not in args:
        raise ToolError("missing required field 'action' (or 'command' for Claude's memory "
                        "commands)")
    args = check_args(ACTION_SCHEMA, args, _ACTION_ERRORS)
    action = args["action"]
    if action == "recall":
        return recall(ctx, args.get("days", DEFAULT_DAYS))
    if action == "remember":
        if "content" not in args:
            raise ToolError("'content' is required for remember action")
        return remember(ctx, args["content"], "remember")
    if action == "reflect":
        return reflect(ctx, args.get("content"), "reflect")
    if action == "update_world":
        for key in ("topic", "content"):
            if key not in args:
                raise ToolError(f"'{key}' is required for update_world action")
        return update_world(ctx, args["topic"], args["content"], "update_world")
    raise ToolError(f"Unknown action: '{action}'. Use: {', '.join(ACTIONS)}")
