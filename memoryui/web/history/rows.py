"""What every history page shows the same way: commits as rows, actors as badges, days,
pages, and the checks on a path or commit id taken from a URL.

Links in rows come from `memoryui.web.links` (reverse() once per URL name): a page lists
up to 50 rows.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property, wraps
from urllib.parse import quote, urlencode

from django.http import Http404, HttpRequest, HttpResponse
from django.utils import timezone
from django.views.decorators.http import require_GET

from memoryui.roles import VIEWER, require_role
from memoryui.store import Ambiguous, InvalidName, NotFound, Store, names
from memoryui.store.commitinfo import CommitInfo
from memoryui.store.writes import Write, writes_of
from memoryui.web.common import BadInput, web_errors
from memoryui.web.links import area_root, commit_url, file_url, history_url, link
from memoryui.web.sync.marks import mark_via_remote

from .forms import SHA_RE, PageQuery, first_error

MAX_FILES_PER_ROW = 5
MAX_WRITES_PER_ROW = 10  # the commit page lists them all
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # what a root commit is compared with


def checked_path(path: str) -> str:
    """A workspace path from the URL; a bad one is a 400 with the rule it breaks."""
    try:
        return names.validate_relpath(path)
    except InvalidName as exc:
        raise BadInput(str(exc)) from None


PathView = Callable[[HttpRequest, str], HttpResponse]


def about_file(view: PathView) -> PathView:
    """A page about one workspace file, for viewers and read only: the view gets the path
    checked (a bad one is a 400 page)."""

    @wraps(view)
    def checked(request: HttpRequest, path: str) -> HttpResponse:
        return view(request, checked_path(path))

    return require_GET(require_role(VIEWER)(web_errors(checked)))


def commit_id(store: Store, rev: str) -> str:
    """The full sha of a commit id from a URL or form: malformed or unknown ids are simply
    not found (404), like unknown ones; an ambiguous prefix asks for more digits (400)."""
    if not SHA_RE.fullmatch(rev or ""):
        raise Http404("no such commit")
    try:
        return store.git.resolve_commit(rev)
    except Ambiguous as exc:
        raise BadInput(str(exc)) from None
    except (InvalidName, NotFound):
        raise Http404("no such commit") from None


def page_number(request: HttpRequest) -> int:
    form = PageQuery(request.GET)
    if not form.is_valid():
        raise BadInput(first_error(form))
    return form.cleaned_data["page"]


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
        return area_root("activity") + "?" + urlencode({"actor": self.filter_value})


@dataclass
class CommitRow:
    """A commit as a history or activity row."""

    info: CommitInfo
    path: str | None = None  # file history: the file this row is about
    status: str | None = None  # that file's change in the commit: A M D R
    at_rev: str = ""  # where "view file at this commit" points
    latest: bool = False
    via_remote: bool = False  # arrived from the git remote (set by web.sync.marks)
    via_push: str = ""  # the host token that pushed it to /git/ (set by web.sync.marks)
    files_shown: list = field(default_factory=list)
    files_more: int = 0

    @cached_property
    def actor(self) -> ActorView:
        return ActorView(self.info.actor)

    @cached_property
    def tools(self) -> list[str]:
        return self.info.tools

    @cached_property
    def writes(self) -> list[Write]:
        """Each write of a grouped commit (store/writes.py); empty for a single write."""
        return writes_of(self.info.trailers)

    @property
    def when(self) -> dt.datetime:
        return self.info.when

    @property
    def deleted(self) -> bool:
        return self.status == "D"

    @property
    def commit_href(self) -> str:
        return commit_url(self.info.sha)

    @property
    def compare_href(self) -> str:
        return commit_url(self.info.sha) + "?path=" + quote(self.path or "")

    @property
    def at_href(self) -> str:
        return link("file_at", self.at_rev, self.path or "")


def rows(infos: list[CommitInfo], path: str | None = None) -> list[CommitRow]:
    out = []
    for info in infos:
        row = CommitRow(info, path=path, at_rev=info.sha)
        if path:
            for fc in info.files:
                if fc.path == path or fc.old_path == path:
                    row.status = fc.status
            if row.status == "D" and info.parents:
                row.at_rev = info.parents[0]
        row.files_shown = [
            {"path": fc.path, "status": fc.status, "old_path": fc.old_path,
             "href": history_url(fc.path) if fc.status == "D" else file_url(fc.path)}
            for fc in info.files[:MAX_FILES_PER_ROW]
        ]
        row.files_more = max(0, len(info.files) - MAX_FILES_PER_ROW)
        out.append(row)
    mark_via_remote(out)
    return out


def by_day(rows: list[CommitRow]) -> list[tuple[dt.date, list[CommitRow]]]:
    """GitHub's "Commits on <day>" grouping, in the server's time zone."""
    groups: list[tuple[dt.date, list[CommitRow]]] = []
    for row in rows:
        day = timezone.localtime(row.when).date()
        if groups and groups[-1][0] == day:
            groups[-1][1].append(row)
        else:
            groups.append((day, [row]))
    return groups


def pager(request: HttpRequest, page: int, has_next: bool) -> dict:
    """Previous and next links of a history page (`?page=`). Not Django's Paginator: it needs
    the count of every commit, a walk of the whole log; a page reads one commit past its
    end instead (`has_next`)."""
    def to(n: int) -> str:
        q = request.GET.copy()
        q["page"] = str(n)
        return "?" + q.urlencode()

    return {"page": page, "prev": to(page - 1) if page > 1 else None,
            "next": to(page + 1) if has_next else None}
