"""History, diffs, blame, restore, the activity feed and pending changes (DESIGN.md s5).

Thin views over the Store: each page costs a bounded number of git commands (one `git log`
per history/activity page, one `git show` pair per commit page, one `git status` for pending
changes), never one per file.
"""

from __future__ import annotations

import datetime as dt
import re
import uuid
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property, wraps
from urllib.parse import quote, urlencode

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.cache import patch_vary_headers
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseClientRedirect

from memoryui.rendering import render_markdown
from memoryui.roles import CURATOR, VIEWER, has_role, require_role
from memoryui.store import ABSENT, Actor, Conflict, InvalidName, NotFound, StoreError, names
from memoryui.store import history as githistory
from memoryui.store.diffs import FileDiff, diff_texts
from memoryui.store.history import BlameLine, CommitInfo
from memoryui.web import hierarchy
from memoryui.workspace import get_store

from .diffview import FileView, anchor_for, file_views

HISTORY_PAGE = 30
ACTIVITY_PAGE = 50
PENDING_INLINE_DIFFS = 25  # more pending files load their diff on demand
MAX_PENDING_DIFF_CHARS = 1_000_000
MAX_FILES_PER_ROW = 5
MAX_OFFSET = 10_000_000
DIGITS_RE = re.compile(r"^[0-9]{1,9}$")
SHA_RE = re.compile(r"^[0-9a-fA-F]{4,40}$")
VERSION_RE = re.compile(r"^[0-9a-f]{64}$")
USER_RE = re.compile(r"^[\w.@+-]{1,150}$")
GIT_NAME_RE = re.compile(r"^[\w .@-]{1,100}$")
XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
ATOM_NS = "http://www.w3.org/2005/Atom"
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # what a root commit is compared with


class BadInput(Exception):
    """A request parameter a person can correct; shown as a message with a 400."""


# --------------------------------------------------------------------------- helpers


def _store_errors(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Turn store refusals and bad parameters into a clear 4xx page, never a 500."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
        try:
            return view(request, *args, **kwargs)
        except BadInput as exc:
            return _error(request, str(exc), 400)
        except (NotFound, Http404) as exc:
            return _error(request, str(exc) or "not found", 404)
        except StoreError as exc:
            return _error(request, str(exc), exc.status)

    return wrapped


def _error(request: HttpRequest, message: str, status: int) -> HttpResponse:
    title = {400: "Bad request", 404: "Not found", 409: "Conflict"}.get(status, "Error")
    return _page(request, "web/history/error.html", {"title": title, "message": message},
                 status=status)


def _page(request: HttpRequest, template: str, ctx: dict, *, status: int = 200,
          path: str | None = None, scope: str | None = None) -> HttpResponse:
    """A full page: the browse area's hierarchy sidebar (current file/scope open) around it."""
    ctx = {**hierarchy.sidebar(get_store(), current_path=path, scope=scope), **ctx}
    ctx.setdefault("can_curate", has_role(request.user, CURATOR))
    response = render(request, template, ctx, status=status)
    patch_vary_headers(response, ("HX-Request",))
    return response


def _fragment(request: HttpRequest) -> bool:
    htmx = getattr(request, "htmx", None)
    return bool(htmx) and not htmx.history_restore_request


def _path(path: str) -> str:
    try:
        return names.validate_relpath(path)
    except InvalidName as exc:
        raise BadInput(str(exc)) from None


def _sha(sha: str) -> str:
    """Malformed revisions are simply not found (404), like unknown ones."""
    if not SHA_RE.fullmatch(sha or ""):
        raise Http404("no such commit")
    return sha.lower()


def _page_number(request: HttpRequest) -> int:
    raw = request.GET.get("page", "1") or "1"
    if not DIGITS_RE.fullmatch(raw) or int(raw) < 1 or int(raw) > MAX_OFFSET:
        raise BadInput(f"invalid page {raw!r}: use a whole number from 1")
    return int(raw)


def _me(request: HttpRequest) -> Actor:
    user = request.user
    return Actor.user(user.get_username(), getattr(user, "email", "") or None)


def ago(ts: int | float, now: float | None = None) -> str:
    """GitHub-style relative time ("3 hours ago"), one unit only."""
    now = timezone.now().timestamp() if now is None else now
    secs = int(now - ts)
    if secs < 0:
        return "in the future"
    if secs < 60:
        return "just now"
    for unit, size in (("year", 31_536_000), ("month", 2_592_000), ("week", 604_800),
                       ("day", 86_400), ("hour", 3_600), ("minute", 60)):
        if secs >= size:
            n = secs // size
            return f"{n} {unit}{'s' if n != 1 else ''} ago"
    return "just now"


def _file_href(path: str) -> str:
    return "/f/" + quote(path)


@dataclass
class ActorView:
    """How an actor is shown: agent / person / outside git author."""

    raw: str

    @property
    def kind(self) -> str:
        return self.raw.split(":", 1)[0] if ":" in self.raw else "git"

    @property
    def name(self) -> str:
        return self.raw.split(":", 1)[1] if ":" in self.raw else self.raw

    @property
    def badge(self) -> str:
        return {"agent": "badge-agent", "user": "badge-person"}.get(self.kind, "badge-git")

    @property
    def label(self) -> str:
        return {"agent": "agent", "user": "person",
                "external": "outside memoryui"}.get(self.kind, "git author")

    @property
    def filter_value(self) -> str:
        return self.name if self.kind == "git" else self.raw

    @property
    def href(self) -> str:
        return "/activity/?" + urlencode({"actor": self.filter_value})


@dataclass
class CommitRow:
    """A commit as a history or activity row."""

    info: CommitInfo
    now: float
    path: str | None = None  # file history: the file this row is about
    status: str | None = None  # that file's change in the commit: A M D R
    at_rev: str = ""  # where "view file at this commit" points
    latest: bool = False
    files_shown: list = field(default_factory=list)
    files_more: int = 0

    @cached_property
    def actor(self) -> ActorView:
        return ActorView(self.info.actor)

    @cached_property
    def tools(self) -> list[str]:
        return self.info.tools

    @property
    def ago(self) -> str:
        return ago(self.info.time, self.now)

    @property
    def when(self) -> dt.datetime:
        return self.info.when

    @property
    def deleted(self) -> bool:
        return self.status == "D"

    # Links are built here, not with {% url %} per row: a page lists up to 50 rows.
    @property
    def commit_href(self) -> str:
        return f"/commit/{self.info.sha}/"

    @property
    def compare_href(self) -> str:
        return f"/commit/{self.info.sha}/?path={quote(self.path or '')}"

    @property
    def at_href(self) -> str:
        return f"/at/{self.at_rev}/{quote(self.path or '')}"



def _rows(infos: list[CommitInfo], path: str | None = None) -> list[CommitRow]:
    now = timezone.now().timestamp()
    out = []
    for info in infos:
        row = CommitRow(info, now, path=path, at_rev=info.sha)
        if path:
            for fc in info.files:
                if fc.path == path or fc.old_path == path:
                    row.status = fc.status
            if row.status == "D" and info.parents:
                row.at_rev = info.parents[0]
        row.files_shown = [
            {"path": fc.path, "status": fc.status, "old_path": fc.old_path,
             "href": ("/history/" + quote(fc.path) if fc.status == "D"
                      else _file_href(fc.path))}
            for fc in info.files[:MAX_FILES_PER_ROW]
        ]
        row.files_more = max(0, len(info.files) - MAX_FILES_PER_ROW)
        out.append(row)
    return out


def _by_day(rows: list[CommitRow]) -> list[tuple[dt.date, list[CommitRow]]]:
    """GitHub's "Commits on <day>" grouping, in the server's time zone."""
    groups: list[tuple[dt.date, list[CommitRow]]] = []
    for row in rows:
        day = timezone.localtime(row.when).date()
        if groups and groups[-1][0] == day:
            groups[-1][1].append(row)
        else:
            groups.append((day, [row]))
    return groups


def _pager(request: HttpRequest, page: int, has_next: bool) -> dict:
    def link(n: int) -> str:
        q = request.GET.copy()
        q["page"] = str(n)
        return "?" + q.urlencode()

    return {"page": page, "prev": link(page - 1) if page > 1 else None,
            "next": link(page + 1) if has_next else None}


# --------------------------------------------------------------------------- history pages


@require_GET
@require_role(VIEWER)
@_store_errors
def file_history(request: HttpRequest, path: str) -> HttpResponse:
    path = _path(path)
    store = get_store()
    page = _page_number(request)
    infos = store.log(path, limit=HISTORY_PAGE + 1, offset=(page - 1) * HISTORY_PAGE)
    has_next = len(infos) > HISTORY_PAGE
    rows = _rows(infos[:HISTORY_PAGE], path)
    current, version = store.read_versioned(path)
    if not rows and page == 1 and current is None:
        raise NotFound(f"{path} has no history")
    if rows and page == 1 and current is not None and not rows[0].deleted:
        rows[0].latest = True
    return _page(request, "web/history/file_history.html", {
        "path": path, "address": store.address_of(path), "exists": current is not None,
        "base": version or ABSENT, "groups": _by_day(rows), "pager": _pager(request, page,
                                                                            has_next),
        "file_href": _file_href(path), "restore_action": "/restore/" + quote(path),
    }, path=path)


@require_GET
@require_role(VIEWER)
@_store_errors
def scope_history(request: HttpRequest, scope: str) -> HttpResponse:
    try:
        names.validate_scope(scope)
    except InvalidName as exc:
        raise BadInput(str(exc)) from None
    store = get_store()
    page = _page_number(request)
    infos = store.log(scope=scope, limit=HISTORY_PAGE + 1, offset=(page - 1) * HISTORY_PAGE)
    if not infos and page == 1 and scope not in store.scopes():
        raise NotFound(f"there is no scope {scope!r}")
    has_next = len(infos) > HISTORY_PAGE
    rows = _rows(infos[:HISTORY_PAGE])
    return _page(request, "web/history/scope_history.html", {
        "scope": scope, "groups": _by_day(rows), "pager": _pager(request, page, has_next),
        "scope_term": store.layout.scope_term, "activity_query": urlencode({"scope": scope}),
    }, scope=scope)


def _trailer_rows(info: CommitInfo) -> list[dict]:
    out = []
    for key, values in info.trailers.items():
        for value in values:
            href = None
            if key == "Restored-From" and SHA_RE.fullmatch(value):
                href = reverse("commit", args=[value])
            elif key == "Promoted-From":
                src, _, entry = value.partition("#")
                try:
                    names.validate_relpath(src)
                    # the file page anchors each daily entry as `e-<entry id>`
                    href = _file_href(src) + (f"#e-{quote(entry)}" if entry else "")
                except InvalidName:
                    href = None
            out.append({"key": key, "value": value, "href": href})
    return out


@require_GET
@require_role(VIEWER)
@_store_errors
def commit(request: HttpRequest, sha: str) -> HttpResponse:
    sha = _sha(sha)
    store = get_store()
    split = request.GET.get("view") == "split"
    only = request.GET.get("path")
    if only:
        # One file of a commit (compare-with-previous): diff just that path, so a commit of
        # thousands of files does not parse its whole patch for one of them.
        only = _path(only)
        full = store.resolve(sha)
        infos = githistory.log(store.root, [], rev=full, limit=1) if full else []
        if not infos:
            raise Http404("no such commit")
        detail = infos[0]
        if not any(only in (fc.path, fc.old_path) for fc in detail.files):
            raise NotFound(f"commit {detail.short} does not change {only}")
        parent = detail.parents[0] if detail.parents else EMPTY_TREE
        diffs = [d for d in githistory.diff(store.root, parent, detail.sha, only)
                 if only in (d.path, d.old_path)]
    else:
        detail = store.commit(sha)
        if detail is None:
            raise Http404("no such commit")
        diffs = detail.diffs
    files = file_views(diffs, split=split)
    drawn = [f for f in files if f.drawn]
    ctx = {
        "commit": detail, "row": _rows([detail])[0], "files": drawn, "all_files": files,
        "undrawn": len(files) - len(drawn), "split": split, "only": only,
        "trailers": _trailer_rows(detail),
        "additions": sum(f.additions for f in files),
        "deletions": sum(f.deletions for f in files),
        "unified_href": "?" + urlencode({"path": only} if only else {}),
        "split_href": "?" + urlencode({"view": "split", **({"path": only} if only else {})}),
    }
    if _fragment(request) and only:
        tpl = "web/history/_diff_split.html" if split else "web/history/_diff_unified.html"
        response = render(request, tpl, ctx)
        patch_vary_headers(response, ("HX-Request",))
        return response
    return _page(request, "web/history/commit.html", ctx, path=only)


@require_GET
@require_role(VIEWER)
@_store_errors
def file_at(request: HttpRequest, sha: str, path: str) -> HttpResponse:
    sha = _sha(sha)
    path = _path(path)
    store = get_store()
    full = store.resolve(sha)
    if full is None:
        raise Http404("no such commit")
    text = store.file_at(path, full)
    if text is None:
        raise NotFound(f"{path} did not exist at commit {full[:8]}")
    infos = githistory.log(store.root, [], rev=full, limit=1, with_files=False)
    current, version = store.read_versioned(path)
    raw = request.GET.get("view") == "raw"
    return _page(request, "web/history/file_at.html", {
        "path": path, "sha": full, "row": _rows(infos)[0] if infos else None,
        "text": text, "html": None if raw else render_markdown(text), "raw": raw,
        "same_as_current": text == current, "exists": current is not None,
        "base": version or ABSENT, "file_href": _file_href(path),
        "address": store.address_of(path),
    }, path=path)


@dataclass
class BlameBlock:
    sha: str
    actor: ActorView
    time: int
    summary: str
    ago: str
    age: int  # 0 (oldest) .. 4 (newest), for the age bar
    lines: list[BlameLine]

    @property
    def short(self) -> str:
        return self.sha[:8]

    @property
    def when(self) -> dt.datetime:
        return dt.datetime.fromtimestamp(self.time, tz=dt.UTC)

    @property
    def uncommitted(self) -> bool:
        return self.sha.startswith("0000000")


@require_GET
@require_role(VIEWER)
@_store_errors
def blame(request: HttpRequest, path: str) -> HttpResponse:
    path = _path(path)
    store = get_store()
    if store.head() is None or store.file_at(path, "HEAD") is None:
        raise NotFound(f"{path} is not in the committed workspace")
    lines = store.blame(path)
    now = timezone.now().timestamp()
    times = [ln.time for ln in lines] or [0]
    oldest, newest = min(times), max(times)
    span = max(newest - oldest, 1)
    blocks: list[BlameBlock] = []
    for ln in lines:
        if blocks and blocks[-1].sha == ln.sha:
            blocks[-1].lines.append(ln)
            continue
        age = min(4, int(4 * (ln.time - oldest) / span)) if newest > oldest else 4
        blocks.append(BlameBlock(ln.sha, ActorView(ln.actor or f"git:{ln.author}"), ln.time,
                                 ln.summary, ago(ln.time, now), age, [ln]))
    return _page(request, "web/history/blame.html", {
        "path": path, "blocks": blocks, "line_count": len(lines),
        "commit_count": len({b.sha for b in blocks}), "file_href": _file_href(path),
        "address": store.address_of(path),
    }, path=path)


# --------------------------------------------------------------------------- restore


@require_role(CURATOR)
@require_POST
@_store_errors
def restore(request: HttpRequest, path: str) -> HttpResponse:
    path = _path(path)
    rev = request.POST.get("rev", "")
    base = request.POST.get("base", "")
    if not SHA_RE.fullmatch(rev):
        raise BadInput("choose the version to restore (rev must be a commit sha)")
    if base != ABSENT and not VERSION_RE.fullmatch(base):
        raise BadInput("the form lacks the version it was loaded from; reload the page")
    message = request.POST.get("message", "").strip() or None
    store = get_store()
    full = store.resolve(rev)
    if full is None:
        raise Http404("no such commit")
    old = store.file_at(path, full)
    if old is None and not store.exists(path):
        messages.info(request, f"{path} did not exist at {full[:8]} and does not exist now: "
                               "nothing to restore.")
        return redirect("file_history", path=path)
    try:
        result = store.restore(path, full, actor=_me(request), expect=base, message=message)
    except Conflict as exc:
        return _restore_conflict(request, store, path, full, old, exc)
    store.flush()
    if not result.changed:
        messages.info(request, f"{path} is already the same as at {full[:8]}; "
                               "no commit was needed.")
    else:
        new = result.commit or store.head() or ""
        messages.success(request, f"Restored {path} as of {full[:8]} (new commit {new[:8]}).")
    return redirect("file_history", path=path)


def _restore_conflict(request: HttpRequest, store: object, path: str, rev: str,
                      old: str | None, exc: Conflict) -> HttpResponse:
    """Someone changed the file since the page loaded: show what they did, overwrite nothing."""
    fd = diff_texts(exc.current, old, path)
    return _page(request, "web/history/restore_conflict.html", {
        "path": path, "rev": rev, "message": str(exc), "files": file_views([fd]),
        "base": exc.version or ABSENT, "exists": exc.current is not None,
        "file_href": _file_href(path),
    }, status=409, path=path)


# --------------------------------------------------------------------------- activity


@dataclass
class ActivityFilters:
    actor: str = ""
    scope: str = ""
    kind: str = ""
    since: str = ""
    until: str = ""
    offset: int = 0
    errors: list[str] = field(default_factory=list)

    def query(self, **extra: object) -> str:
        """The filters as a query string (links keep them; empty ones are left out)."""
        data = {k: getattr(self, k) for k in ("actor", "scope", "kind", "since", "until")}
        data.update({k: str(v) for k, v in extra.items()})
        return urlencode({k: v for k, v in data.items() if v not in ("", None, "0")})

    def log_args(self) -> dict:
        actor = self.actor.removeprefix("git:")
        return {"actor": actor or None, "scope": self.scope or None, "kind": self.kind or None,
                "since": self.since or None, "until": self.until or None}


def activity_filters(params: QueryDict, kinds: list[str]) -> ActivityFilters:
    """Read and check the activity filters; every problem becomes a message."""
    f = ActivityFilters(**{k: params.get(k, "").strip()
                           for k in ("actor", "scope", "kind", "since", "until")})
    if f.actor:
        kind, sep, name = f.actor.partition(":")
        if sep and kind == "agent":
            if not names.SCOPE_RE.fullmatch(name):
                f.errors.append(f"invalid agent {name!r}: agents are scope names "
                                "(letters, digits, '_' or '-')")
        elif sep and kind == "user":
            if not USER_RE.fullmatch(name):
                f.errors.append(f"invalid person {name!r}")
        elif sep and kind in ("git", "external"):
            if not GIT_NAME_RE.fullmatch(name):
                f.errors.append(f"invalid git author name {name!r}")
        elif not GIT_NAME_RE.fullmatch(f.actor):
            f.errors.append(f"invalid actor {f.actor!r}: use agent:<scope>, user:<name> "
                            "or a git author name")
    if f.scope and not names.SCOPE_RE.fullmatch(f.scope):
        f.errors.append(f"invalid scope {f.scope!r}: use letters, digits, '_' or '-'")
    if f.kind and f.kind not in kinds:
        f.errors.append(f"invalid kind {f.kind!r}: choose one of {', '.join(kinds)}")
    for key in ("since", "until"):
        value = getattr(f, key)
        if value:
            try:
                names.validate_date(value)
            except InvalidName as exc:
                f.errors.append(f"{key}: {exc}")
                setattr(f, key, "")
    if f.since and f.until and f.since > f.until:
        f.errors.append(f"since ({f.since}) is after until ({f.until})")
    raw = params.get("offset", "0").strip() or "0"
    if not DIGITS_RE.fullmatch(raw) or int(raw) > MAX_OFFSET:
        f.errors.append(f"invalid offset {raw!r}")
    else:
        f.offset = int(raw)
    return f


def _activity(request: HttpRequest, limit: int) -> tuple[ActivityFilters, list[CommitRow],
                                                          bool, list[str]]:
    store = get_store()
    kinds = [k.value for k in store.layout.kinds()]
    f = activity_filters(request.GET, kinds)
    if f.errors:
        return f, [], False, kinds
    infos = store.log(limit=limit + 1, offset=f.offset, with_files=True, **f.log_args())
    return f, _rows(infos[:limit]), len(infos) > limit, kinds


@require_GET
@require_role(VIEWER)
@_store_errors
def activity(request: HttpRequest) -> HttpResponse:
    f, rows, has_more, kinds = _activity(request, ACTIVITY_PAGE)
    ctx = {
        "filters": f, "rows": rows, "groups": _by_day(rows), "kinds": kinds,
        "older": "?" + f.query(offset=f.offset + ACTIVITY_PAGE) if has_more else None,
        "newer": ("?" + f.query(offset=max(0, f.offset - ACTIVITY_PAGE))
                  if f.offset > 0 else None),
        "atom_query": f.query(), "filtered": bool(f.query()),
    }
    status = 400 if f.errors else 200
    if _fragment(request):
        # htmx does not swap 4xx responses, and the errors belong in the results area.
        response = render(request, "web/history/_activity_rows.html", ctx)
        patch_vary_headers(response, ("HX-Request",))
        return response
    store = get_store()
    ctx["actor_choices"] = _actor_choices(store)
    ctx["scopes"] = store.scopes()
    return _page(request, "web/history/activity.html", ctx, status=status)


def _actor_choices(store: object) -> list[str]:
    """Suggestions for the actor filter: every scope's agent and every person."""
    from django.contrib.auth import get_user_model

    people = get_user_model().objects.filter(is_active=True).order_by("username")
    return ([f"agent:{s}" for s in store.scopes()]
            + [f"user:{u}" for u in people.values_list("username", flat=True)[:500]])


def _xml_text(value: str) -> str:
    return XML_INVALID.sub("\ufffd", value)


@require_GET
@require_role(VIEWER)
@_store_errors
def activity_atom(request: HttpRequest) -> HttpResponse:
    f, rows, _has_more, _kinds = _activity(request, ACTIVITY_PAGE)
    if f.errors:
        return HttpResponse("; ".join(f.errors), status=400,
                            content_type="text/plain; charset=utf-8")
    ET.register_namespace("", ATOM_NS)

    def el(parent: ET.Element, tag: str, text: str | None = None, **attrs: str) -> ET.Element:
        node = ET.SubElement(parent, f"{{{ATOM_NS}}}{tag}", attrs)
        if text is not None:
            node.text = _xml_text(text)
        return node

    query = f.query()
    page_url = request.build_absolute_uri(reverse("activity") + (f"?{query}" if query else ""))
    self_url = request.build_absolute_uri(reverse("activity_atom")
                                          + (f"?{query}" if query else ""))
    feed = ET.Element(f"{{{ATOM_NS}}}feed")
    el(feed, "id", page_url)
    title = "memoryui activity" + (f" ({query.replace('&', ', ')})" if query else "")
    el(feed, "title", title)
    newest = rows[0].when if rows else dt.datetime(2000, 1, 1, tzinfo=dt.UTC)
    el(feed, "updated", newest.isoformat())
    el(feed, "link", rel="self", type="application/atom+xml", href=self_url)
    el(feed, "link", rel="alternate", type="text/html", href=page_url)
    el(feed, "generator", "memoryui")
    for row in rows:
        info = row.info
        entry = el(feed, "entry")
        el(entry, "id", f"urn:uuid:{uuid.uuid5(uuid.NAMESPACE_OID, 'memoryui:' + info.sha)}")
        el(entry, "title", info.subject)
        el(entry, "updated", info.when.isoformat())
        author = el(entry, "author")
        el(author, "name", info.actor)
        el(author, "email", info.email)
        el(entry, "link", rel="alternate", type="text/html",
           href=request.build_absolute_uri(reverse("commit", args=[info.sha])))
        el(entry, "category", term=row.actor.kind)
        for tool in info.tools:
            el(entry, "category", term=f"tool:{tool}")
        lines = [info.body] if info.body else []
        lines += [f"{fc.status} {fc.path}" for fc in info.files]
        el(entry, "summary", "\n".join(lines) or info.subject, type="text")
    body = ET.tostring(feed, encoding="utf-8", xml_declaration=True)
    response = HttpResponse(body, content_type="application/atom+xml; charset=utf-8")
    return response


# --------------------------------------------------------------------------- pending


@dataclass
class PendingItem:
    path: str
    status: str
    owner: Actor
    diff: FileView | None = None

    @property
    def anchor(self) -> str:
        return anchor_for(self.path)

    @property
    def diffs(self) -> list[FileView]:
        return [self.diff] if self.diff else []

    @property
    def owner_label(self) -> str:
        return self.owner.trailer if self.owner.kind != "external" else "workspace (no scope)"


def _pending_diff(store: object, path: str, status: str) -> FileView:
    """HEAD's version against the working file, diffed in memory (no git command)."""
    old = store.file_at(path, "HEAD") if store.head() else None
    new = None if status == "deleted" else store.read(path)
    if len(old or "") + len(new or "") > MAX_PENDING_DIFF_CHARS:
        # difflib is quadratic in the worst case; a rewrite of a huge file is not drawn.
        fd = FileDiff(path, status="added" if old is None else "deleted" if new is None
                      else "modified")
        return FileView(fd, anchor_for(path), too_large=True)
    return file_views([diff_texts(old, new, path)])[0]


@require_GET
@require_role(VIEWER)
@_store_errors
def pending(request: HttpRequest) -> HttpResponse:
    store = get_store()
    items = [PendingItem(e.path, e.status, store.owner_of(e.path)) for e in store.pending()]
    for item in items[:PENDING_INLINE_DIFFS]:
        item.diff = _pending_diff(store, item.path, item.status)
    committed = [s for s in request.GET.get("committed", "").split(",") if SHA_RE.fullmatch(s)]
    return _page(request, "web/history/pending.html", {
        "items": items, "committed": committed[:50], "only": None,
        "inline_limit": PENDING_INLINE_DIFFS,
    })


@require_GET
@require_role(VIEWER)
@_store_errors
def pending_diff(request: HttpRequest, path: str) -> HttpResponse:
    path = _path(path)
    store = get_store()
    entry = next((e for e in store.pending() if e.path == path), None)
    if entry is None:
        raise NotFound(f"{path} has no pending change")
    item = PendingItem(entry.path, entry.status, store.owner_of(entry.path))
    item.diff = _pending_diff(store, path, entry.status)
    if _fragment(request):
        response = render(request, "web/history/_pending_diff.html", {"item": item})
        patch_vary_headers(response, ("HX-Request",))
        return response
    return _page(request, "web/history/pending.html", {
        "items": [item], "committed": [], "only": path, "inline_limit": 1,
    }, path=path)


def _chosen_paths(request: HttpRequest) -> list[str]:
    paths = [_path(p) for p in request.POST.getlist("paths")]
    return list(dict.fromkeys(paths))


@require_role(CURATOR)
@require_POST
@_store_errors
def pending_commit(request: HttpRequest) -> HttpResponse:
    paths = _chosen_paths(request)
    if not paths:
        messages.error(request, "Select at least one file to commit.")
        return redirect("pending")
    me = request.POST.get("attribute") == "me"
    message = request.POST.get("message", "").strip() or None
    store = get_store()
    shas = store.commit_pending(paths, actor=_me(request) if me else None, message=message)
    if not shas:
        messages.warning(request, "Nothing was committed: the selected files no longer have "
                                  "pending changes.")
        return redirect("pending")
    who = f"you ({request.user.get_username()})" if me else "the owning scopes"
    messages.success(request, f"Committed {len(paths)} file(s) in {len(shas)} commit(s), "
                              f"attributed to {who}.")
    return redirect(reverse("pending") + "?" + urlencode({"committed": ",".join(shas)}))


@require_role(CURATOR)
@require_POST
@_store_errors
def pending_discard(request: HttpRequest) -> HttpResponse:
    paths = _chosen_paths(request)
    if not paths:
        messages.error(request, "Select at least one file to discard.")
        return redirect("pending")
    store = get_store()
    if request.POST.get("confirm") != "yes":
        pending_now = {e.path: e.status for e in store.pending()}
        items = [PendingItem(p, pending_now[p], store.owner_of(p))
                 for p in paths if p in pending_now]
        return _page(request, "web/history/discard_confirm.html", {"items": items})
    done = store.discard_pending(paths)
    if done:
        messages.success(request, f"Discarded the outside changes to {len(done)} file(s): "
                                  + ", ".join(done[:10]) + (" …" if len(done) > 10 else ""))
    else:
        messages.warning(request, "Nothing was discarded: the selected files no longer have "
                                  "pending changes.")
    if _fragment(request):
        return HttpResponseClientRedirect(reverse("pending"))
    return redirect("pending")
