"""The `/memories` paths of Claude's memory tool: a path the model sends, checked as the
reference implementation checks it (prefix, `..` escapes, symbolic links) and resolved to the
scope's memory folder in the workspace layout; store messages shown with `/memories` paths."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from memoryui.store import StoreError, names
from memoryui.store.agentview import AgentStore
from memoryui.tools.registry import ToolContext, ToolError

ROOT = "/memories"

# Where `/memories` lives below `layout.scope_prefix(scope)`, per layout.
SUFFIX = {"duragent": "memory/", "dagu": "", "zerostack": "", "jutul": "memory/"}


class Target:
    """A `/memories` path the model used, resolved to a workspace path in the scope folder."""

    def __init__(self, ctx: ToolContext, path: object, field: str = "path"):
        if not isinstance(path, str):
            raise ToolError(f"missing required field '{field}'")
        if path != ROOT and not path.startswith(ROOT + "/"):
            raise ToolError(f"Path must start with /memories, got: {path}")
        parts: list[str] = []
        for part in path[len(ROOT):].split("/"):
            if part in ("", "."):
                continue
            if part == "..":
                if not parts:
                    raise ToolError(f"Path {path} would escape /memories directory")
                parts.pop()
            else:
                parts.append(part)
        layout = ctx.store.layout
        try:
            self.prefix = layout.scope_prefix(ctx.scope) + SUFFIX[layout.key]
        except StoreError as exc:
            raise ToolError.from_store(exc) from None
        self.ctx = ctx
        self.path = path
        self.parts = parts
        self.is_root = not parts
        self.ws = self.prefix + "/".join(parts) if parts else self.prefix.rstrip("/")
        with self.refusals():
            names.validate_relpath(self.ws)
        self._refuse_symlinks()
        self.full = ctx.store.root / self.ws

    def _refuse_symlinks(self) -> None:
        root = self.ctx.store.root
        memory_root = os.path.normpath(root / self.prefix)
        cur = root
        for part in self.ws.split("/"):
            cur = cur / part
            if not cur.is_symlink():
                continue
            target = os.path.realpath(cur)
            if target != memory_root and not target.startswith(memory_root + os.sep):
                raise ToolError("Path would escape /memories directory via symlink")
            raise ToolError(f"Path {self.path} goes through a symbolic link; memoryui does "
                            "not follow symbolic links")

    def is_file(self) -> bool:
        """A file as this agent sees it (its own proposals included: agentview.py)."""
        if isinstance(self.ctx.store, AgentStore):
            return self.ctx.store.exists(self.ws)
        return self.full.is_file()

    def exists(self) -> bool:
        if isinstance(self.ctx.store, AgentStore):
            return self.is_file() or self.full.is_dir()
        return self.full.exists()

    def public(self, text: str) -> str:
        return public(self.prefix, text)

    @contextmanager
    def refusals(self) -> Iterator[None]:
        """A store error becomes the tool's error, its paths told as `/memories` paths."""
        try:
            yield
        except StoreError as exc:
            raise ToolError(self.public(str(exc)), exc.code, exc.status) from None

    def file_ancestor(self) -> str | None:
        """The first ancestor that is a file (so nothing can be created below it)."""
        cur = self.ctx.store.root / self.prefix
        for i, part in enumerate(self.parts[:-1]):
            cur = cur / part
            if cur.is_file():
                return ROOT + "/" + "/".join(self.parts[: i + 1])
        return None


def public(prefix: str, text: str) -> str:
    """Store messages name workspace paths; the model only knows `/memories` paths."""
    return text.replace(prefix, ROOT + "/").replace(prefix.rstrip("/"), ROOT)


def missing(path: str) -> ToolError:
    return ToolError(f"The path {path} does not exist. Please provide a valid path.",
                     "not_found", 404)
