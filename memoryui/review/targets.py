"""Where entries can be promoted to: a scope's MEMORY.md, global memory, a world topic or a
skill, as far as the workspace's layout has them. Names are checked by the layout's rules.

Plain Python: no Django.
"""

from __future__ import annotations

from dataclasses import dataclass

from memoryui.search.catalogue import Catalogue
from memoryui.store import ABSENT, Kind, Store, names, skills, walk
from memoryui.store.layout import KIND_LABELS

from .errors import ReviewError

TARGET_KINDS = (Kind.MEMORY, Kind.GLOBAL, Kind.WORLD, Kind.SKILL)


@dataclass
class Target:
    kind: Kind
    path: str
    scope: str | None
    name: str | None
    text: str | None  # None: a new file
    version: str | None

    @property
    def exists(self) -> bool:
        return self.text is not None

    @property
    def base(self) -> str:
        """The version an editor saves against (ABSENT for a new file)."""
        return self.version or ABSENT

    @property
    def label(self) -> str:
        if self.kind == Kind.MEMORY:
            return f"{self.scope}'s MEMORY.md"
        if self.kind == Kind.GLOBAL:
            return "global memory"
        return f"{KIND_LABELS[self.kind].lower()} {self.name}"


def target_kinds(store: Store) -> list[Kind]:
    return [k for k in TARGET_KINDS if store.layout.supports(k)]


def default_kind(store: Store) -> Kind | None:
    """The first choice offered: a scope's MEMORY.md where the layout has one."""
    kinds = target_kinds(store)
    if not kinds:
        return None
    return Kind.MEMORY if Kind.MEMORY in kinds else Kind.GLOBAL


def make_target(store: Store, kind: str, scope: str | None = None,
                name: str | None = None) -> Target:
    """Resolve a promotion target and read its current text and version."""
    try:
        k = Kind(kind)
    except ValueError:
        raise ReviewError(f"unknown target {kind!r}; choose memory, global, world or skill"
                          ) from None
    if k not in TARGET_KINDS:
        raise ReviewError(f"entries cannot be promoted into a {k.value}")
    if not store.layout.supports(k):
        raise ReviewError(f"the {store.layout.title} layout has no {KIND_LABELS[k].lower()}")
    scope = (scope or "").strip() or None
    name = (name or "").strip() or None
    if k == Kind.MEMORY:
        if not scope:
            raise ReviewError("choose the scope whose MEMORY.md receives the entries")
        path = store.path_for(k, scope)
        name = None
    elif k == Kind.GLOBAL:
        path, scope, name = store.path_for(k), None, None
    elif k == Kind.WORLD:
        if not name:
            raise ReviewError("name the world topic (an existing one or a new one)")
        name = names.sanitize_world_topic(name)
        path, scope = store.path_for(k, name=name), None
    else:
        if not name:
            raise ReviewError("name the skill (an existing one or a new one)")
        bad = skills.name_problems(name)
        if bad:
            raise ReviewError("; ".join(bad))
        path, scope = store.path_for(k, name=name), None
    text, version = store.read_versioned(path)
    return Target(k, path, scope, name, text, version)


def existing_names(store: Store, kind: Kind) -> list[str]:
    """Names of the world topics or skills that exist (for the target choosers)."""
    return sorted({name for _path, name, _mtime, _size in kind_files(store, kind) if name})


def kind_files(store: Store, kind: Kind) -> list[tuple[str, str | None, float, int]]:
    """(path, name, mtime, size) of each file the layout calls `kind` outside any scope:
    asked of the catalogue (every review page asks: the choosers' names, the world files
    "already known" reads), or while it is first filled, one walk of the kind's folder
    (two levels: a skill is `skills/<name>/SKILL.md`), never through a symbolic link."""
    folder = store.layout.folder(kind)
    if folder is None:
        return []
    cat = Catalogue.ready(store)
    if cat is None:
        return _walk_kind(store, kind, folder)
    return [(e.path, e.name or None, e.mtime, e.size) for e in cat.of_kind(kind.value)
            if not e.scope]


def _walk_kind(store: Store, kind: Kind, folder: str
               ) -> list[tuple[str, str | None, float, int]]:
    if folder and walk.link_in_path(store.root, folder) is not None:
        return []
    found = []
    for e in walk.walk(store.root, folder, depth=2):
        addr = store.address_of(e.path)
        if addr is not None and addr.kind == kind and addr.scope is None:
            found.append((e.path, addr.name, e.mtime, e.size))
    return found
