"""Layouts: where each logical kind of memory lives on disk, in both directions.

A layout is a table of path patterns (DESIGN.md section 2). The same table answers
"where does agent X's daily log for date D go" and "what is this path", so the tree,
pending-change attribution and the tools can never disagree.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from pathlib import Path

from . import names, walk
from .budgets import DAGU_MAX_LINES, INDEX_MAX_BYTES, INDEX_MAX_LINES, ZEROSTACK_MAX_BYTES, Budget
from .errors import InvalidName
from .kinds import KIND_LABELS, SHARED_KINDS, Address, Kind
from .patterns import NAME_CHECKS, Pattern, name_ok, pathspec

__all__ = ["DAGU", "DURAGENT", "FOLDERS_KEPT", "JUTUL", "KIND_LABELS", "LAYOUTS", "SHARED_KINDS",
           "ZEROSTACK", "Address", "Kind", "Layout", "get_layout", "jutul_workspace_hash",
           "zerostack_project_slug"]


FOLDERS_KEPT = 100_000  # folders whose matching patterns a layout keeps (`_in_folder`)


class Layout:
    """One framework's mapping of kinds onto paths."""

    key: str = ""
    title: str = ""
    scope_term: str = "scope"
    scope_container: str = ""  # folder whose sub-folders are the scopes
    patterns: tuple[Pattern, ...] = ()
    budgets: dict[Kind, Budget] = {}

    # -- addresses -> paths -------------------------------------------------
    def kinds(self) -> list[Kind]:
        seen: list[Kind] = []
        for p in self.patterns:
            if p.kind not in seen:
                seen.append(p.kind)
        return seen

    def supports(self, kind: Kind) -> bool:
        return any(p.kind == kind for p in self.patterns)

    def _pattern_for(self, kind: Kind, scoped: bool) -> Pattern:
        for p in self.patterns:
            if p.kind == kind and p.scoped == scoped:
                return p
        where = "for a scope" if scoped else "outside a scope"
        raise InvalidName(f"the {self.key} layout has no {kind.value} {where}")

    def path(self, addr: Address) -> str:
        """Workspace-relative path for an address, validating every name on the way."""
        kind = Kind(addr.kind)
        pat = self._pattern_for(kind, addr.scope is not None)
        values: dict[str, str] = {}
        if pat.scoped:
            values["scope"] = names.validate_scope(addr.scope)
        if pat.named:
            check = NAME_CHECKS.get(kind)
            if addr.name is None:
                raise InvalidName(f"a {kind.value} needs a name")
            values["name"] = check(addr.name) if check else addr.name
            if kind == Kind.NOTE and values["name"] in self.reserved_note_names:
                raise InvalidName(f"{values['name']!r} is reserved in the {self.key} layout")
        elif addr.name is not None:
            raise InvalidName(f"a {kind.value} takes no name")
        return pat.template.format(**values)

    reserved_note_names: frozenset[str] = frozenset()

    def _by_depth(self) -> dict[int, list[Pattern]]:
        """Patterns by their number of path components, in table order (first match wins)."""
        table = self.__dict__.get("_depth_table")
        if table is None:
            table = {}
            for pat in self.patterns:
                table.setdefault(pat.template.count("/") + 1, []).append(pat)
            self.__dict__["_depth_table"] = table
        return table

    # -- paths -> addresses -------------------------------------------------
    def address(self, path: str) -> Address | None:
        """The logical address of a workspace path, or None for files outside the layout.

        The patterns a folder matches are found once per folder (`_in_folder`); each file
        then only has its name matched: a full build of a 200k-file overview ran every
        pattern of its depth on every path (0.5 s).
        """
        folder, _, base = path.rpartition("/")
        candidates = self._folders().get(folder)
        if candidates is None:
            candidates = self._in_folder(folder)
        for pat, folder_name, scope, base_regex in candidates:
            m = base_regex.match(base)
            if m is None:
                continue
            name = m.groupdict().get("name", folder_name)
            if name is not None:
                if not name_ok(pat.kind, name):
                    continue
                if pat.kind == Kind.NOTE and name in self.reserved_note_names:
                    continue
                name = sys.intern(name)
            return Address(pat.kind, scope, name)
        return None

    def _folders(self) -> dict[str, list]:
        folders = self.__dict__.get("_folder_table")
        if folders is None or len(folders) > FOLDERS_KEPT:  # (a tree of odd folders)
            folders = self.__dict__["_folder_table"] = {}
        return folders

    def _in_folder(self, folder: str) -> list[tuple[Pattern, str | None, str | None,
                                                    re.Pattern[str]]]:
        """The patterns (in table order: the first that matches wins) whose folder part
        `folder` matches, with the scope and name it gives, and their file-name regex."""
        depth = folder.count("/") + 2 if folder else 1
        parts = folder.split("/")
        out = []
        for pat in self._by_depth().get(depth, ()):
            if any(i < depth - 1 and parts[i] != lit for i, lit in pat.fixed):
                continue  # a literal folder differs: no need to run the regex
            folder_regex, base_regex = pat.split
            m = folder_regex.match(folder)
            if m is None:
                continue
            gd = m.groupdict()
            # Interned: the overview keeps an address per file, and 200k files share 500
            # scopes and a few hundred dates (22 MB of copies otherwise).
            scope = gd.get("scope")
            out.append((pat, gd.get("name"), scope and sys.intern(scope), base_regex))
        self._folders()[folder] = out
        return out

    def scope_of(self, path: str) -> str | None:
        prefix = self.scope_container + "/"
        if self.scope_container and path.startswith(prefix):
            scope = path[len(prefix):].split("/", 1)[0]
            if names.SCOPE_RE.match(scope):
                return scope
        addr = self.address(path)
        return addr.scope if addr else None

    def is_shared(self, path: str) -> bool:
        """Files every agent of the workspace reads: world topics, the global memory,
        workspace-wide directives and skills (with the files inside a skill's folder)."""
        if self.scope_of(path) is not None:
            return False
        addr = self.address(path)
        if addr is not None:
            return addr.scope is None and addr.kind in SHARED_KINDS
        parts = path.split("/")
        return (len(parts) >= 3 and parts[0] == "skills" and self.supports(Kind.SKILL)
                and bool(names.SKILL_RE.match(parts[1])))

    def readable_by(self, path: str, scope: str | None) -> bool:
        """The one read rule for a scope token (files, search, history, commits, MCP).

        A scope reads its own files and the shared ones; anything the layout cannot place
        (an unknown path, an odd name) is denied. `scope=None` means an admin: all.
        """
        if scope is None:
            return True
        owner = self.scope_of(path)
        if owner is not None:
            return owner == scope
        return self.is_shared(path)

    def scope_prefix(self, scope: str) -> str:
        return f"{self.scope_container}/{names.validate_scope(scope)}/"

    def folder(self, kind: Kind | str, scope: str | None = None) -> str | None:
        """The folder below which every file of a named kind lives (for a scope): its
        pattern up to the name, e.g. `agents/ops-bot/memory/daily`, `memory/world` or
        `skills` ("" for the root). None when the layout has no such named kind.
        Readers list it with `walk` and keep what `address` says is that kind."""
        kind = Kind(kind)
        for p in self.patterns:
            if p.kind == kind and p.named and p.scoped == (scope is not None):
                template = p.template
                if scope is not None:
                    template = template.replace("{scope}", names.validate_scope(scope))
                return template.split("{name}", 1)[0].rpartition("/")[0]
        return None

    def pathspecs(self, kind: Kind | str | None = None, scope: str | None = None) -> list[str]:
        """git pathspecs selecting a kind and/or a scope (for history filters)."""
        if kind is None:
            return [self.scope_prefix(scope)] if scope else []
        kind = Kind(kind)
        specs = []
        for p in self.patterns:
            if p.kind != kind or (scope and not p.scoped):
                continue
            specs.append(pathspec(p, names.validate_scope(scope) if scope else None))
        if not specs:
            return [":(glob)__no_such_kind__"]
        # Other kinds sharing a folder (jutul's index beside its notes) are excluded.
        folders = {p.template.rsplit("/", 1)[0] for p in self.patterns if p.kind == kind}
        for p in self.patterns:
            if p.kind != kind and "{name}" not in p.template and \
                    p.template.rsplit("/", 1)[0] in folders:
                specs.append(":(exclude,glob)" + p.glob(scope))
        return specs

    def list_scopes(self, root: Path) -> list[str]:
        """Scope folders that exist (real folders, never links), by name."""
        return [name for name in walk.subfolders(root, self.scope_container)
                if names.SCOPE_RE.match(name)]

    def budget(self, kind: Kind | str) -> Budget | None:
        return self.budgets.get(Kind(kind))


def _layout(key: str, title: str, scope_term: str, container: str,
            table: list[tuple[Kind, str]], budgets: dict[Kind, Budget],
            reserved: frozenset[str] = frozenset()) -> Layout:
    cls = type(f"{key.title()}Layout", (Layout,), {
        "key": key, "title": title, "scope_term": scope_term, "scope_container": container,
        "patterns": tuple(Pattern.make(k, t) for k, t in table), "budgets": budgets,
        "reserved_note_names": reserved,
    })
    return cls()


def _journal(folder: str) -> list[tuple[Kind, str]]:
    """A scope's daily logs, notes and scratchpad below `folder`, then the shared skills:
    Duragent and zerostack name them alike."""
    return [(Kind.DAILY, folder + "/daily/{name}.md"), (Kind.NOTE, folder + "/notes/{name}.md"),
            (Kind.SCRATCHPAD, folder + "/SCRATCHPAD.md"), (Kind.SKILL, "skills/{name}/SKILL.md")]


_SKILL_BUDGET = Budget(max_lines=500, label="Agent Skills: body under 500 lines")

DURAGENT = _layout(
    "duragent", "Duragent", "agent", "agents",
    [
        (Kind.WORLD, "memory/world/{name}.md"),
        (Kind.GLOBAL, "memory/MEMORY.md"),
        (Kind.MEMORY, "agents/{scope}/memory/MEMORY.md"),
        *_journal("agents/{scope}/memory"),
        (Kind.DIRECTIVE, "directives/{name}.md"),
        (Kind.DIRECTIVE, "agents/{scope}/directives/{name}.md"),
    ],
    {
        Kind.WORLD: Budget(max_bytes=10_000, min_bytes=1_000, label="Duragent: world topics 1-10 KB"),
        Kind.MEMORY: Budget(max_bytes=10_000, min_bytes=2_000, label="Duragent: MEMORY.md 2-10 KB"),
        Kind.GLOBAL: Budget(max_bytes=10_000, label="Duragent: keep shared memory under 10 KB"),
        Kind.SKILL: _SKILL_BUDGET,
    },
)

DAGU = _layout(
    "dagu", "Dagu", "DAG", "memory/dags",
    [
        (Kind.GLOBAL, "memory/MEMORY.md"),
        (Kind.MEMORY, "memory/dags/{scope}/MEMORY.md"),
        (Kind.SKILL, "skills/{name}/SKILL.md"),
    ],
    {
        Kind.GLOBAL: Budget(max_lines=DAGU_MAX_LINES,
                            label="Dagu: the agent reads the first 200 lines"),
        Kind.MEMORY: Budget(max_lines=DAGU_MAX_LINES,
                            label="Dagu: the agent reads the first 200 lines"),
        Kind.SKILL: _SKILL_BUDGET,
    },
)

_ZS = Budget(max_bytes=ZEROSTACK_MAX_BYTES, label="zerostack: 32 KiB injected / read")
ZEROSTACK = _layout(
    "zerostack", "zerostack", "project", "projects",
    [
        (Kind.GLOBAL, "MEMORY.md"),
        *_journal("projects/{scope}"),
    ],
    {Kind.GLOBAL: _ZS, Kind.DAILY: _ZS, Kind.NOTE: _ZS, Kind.SCRATCHPAD: _ZS,
     Kind.SKILL: _SKILL_BUDGET},
)

JUTUL = _layout(
    "jutul", "jutul-agent", "workspace", "workspaces",
    [
        (Kind.MEMORY, "workspaces/{scope}/memory/MEMORY.md"),
        (Kind.NOTE, "workspaces/{scope}/memory/{name}.md"),
        (Kind.SKILL, "skills/{name}/SKILL.md"),
    ],
    {
        Kind.MEMORY: Budget(max_lines=INDEX_MAX_LINES, max_bytes=INDEX_MAX_BYTES,
                            label="Index loaded in full: keep to 200 lines / 25 KB"),
        Kind.SKILL: _SKILL_BUDGET,
    },
    reserved=frozenset({"MEMORY"}),
)

LAYOUTS: dict[str, Layout] = {lay.key: lay for lay in (DURAGENT, DAGU, ZEROSTACK, JUTUL)}


def get_layout(key: str | Layout) -> Layout:
    if isinstance(key, Layout):
        return key
    try:
        return LAYOUTS[key]
    except KeyError:
        raise InvalidName(
            f"unknown layout {key!r}; choose one of {', '.join(LAYOUTS)}"
        ) from None


# -- framework scope identifiers ---------------------------------------------

def zerostack_project_slug(cwd: str | bytes | None) -> str:
    """zerostack's `project_slug`: `{basename}-{fnv1a64 low 32 bits as 8 hex}`."""
    if cwd is None:
        return "default"
    raw = os.fsencode(cwd)
    h = 0xCBF29CE484222325
    for b in raw:
        h ^= b
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    base_name = os.path.basename(raw.rstrip(b"/")) if raw.rstrip(b"/") else b""
    text = base_name.decode("utf-8", "replace")
    base = "".join(c if (c.isascii() and c.isalnum()) or c in "-_" else "-" for c in text)
    base = base[:40] or "root"
    return f"{base}-{h & 0xFFFFFFFF:08x}"


def jutul_workspace_hash(workspace: str | os.PathLike[str]) -> str:
    """jutul-agent's `workspace_hash`: sha256 of the resolved path, first 12 hex digits."""
    return hashlib.sha256(str(Path(workspace).resolve()).encode()).hexdigest()[:12]
