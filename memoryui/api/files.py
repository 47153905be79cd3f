"""Files and audit API for tooling: list, read, replace and delete files; history; commits.

Optimistic concurrency is HTTP's own: the ETag is the sha256 of the file's bytes, a PUT
over an existing file and every DELETE must send `If-Match` (428 without it), and a stale
tag gets 412 with the current text and a diff instead of a silent overwrite.

Access: admin tokens read and write everything. A scope token reads what the layout's one
read rule (`Layout.readable_by`) allows: its own scope's files and the shared ones (world,
global, skills, workspace directives) that its agent reads anyway; a path the layout cannot
place is denied. It writes inside its own scope, plus world/global files when granted.
History for a scope token is limited to its own scope (the default when no filter is given)
or a path it may read, and lists only commits whose every touched file it may read (merge
commits never); `/commits/<sha>` applies the same rule (403 otherwise).

Commit ids: 7 to 40 hex digits (what `short` in a history entry gives), for every token; a
prefix several commits share is a 400 that asks for more digits.
"""

from __future__ import annotations

import datetime as dt
import re

from django.http import HttpRequest, HttpResponse

from memoryui.api.auth import require_token
from memoryui.api.common import (
    ApiError,
    actor_for,
    agent_store,
    api_view,
    bad_request,
    check_read,
    check_write,
    forbidden,
    json_response,
    may_read,
    read_text,
)
from memoryui.models import Token
from memoryui.store import ABSENT, DELETE, Conflict, Kind, Store, WriteResult, names, version_of
from memoryui.store.agentview import AgentStore
from memoryui.store.commitinfo import CommitDetail, CommitInfo
from memoryui.store.committed import RECORD_ID
from memoryui.store.dates import GIT_MAX, GIT_MIN, BadDate, parse_date
from memoryui.store.diffs import FileDiff, diff_texts, unified_text
from memoryui.workspace import get_store

MAX_LIMIT = 500
MIN_SHA = 7  # git's own default abbreviation; shorter ids make enumeration cheap
TEXT_TYPES = ("text/markdown", "text/plain", "text/x-markdown", "application/octet-stream")
DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2})?(\.\d+)?(Z|[+-]\d{2}:?\d{2})?)?$")


def etag(version: str | None) -> str:
    return f'"{version}"'


def _tags(header: str) -> list[str]:
    """Entity tags of an If-Match/If-None-Match header (weak tags never match If-Match)."""
    out = []
    for part in header.split(","):
        part = part.strip()
        if part == "*":
            out.append("*")
        elif part.startswith('"') and part.endswith('"') and len(part) >= 2:
            out.append(part[1:-1])
        elif re.fullmatch(r"[0-9a-fA-F]{64}", part):
            out.append(part.lower())  # a bare sha256, as curl users tend to send it
    return out


def _file_entry(store: Store, path: str, data: bytes) -> dict:
    addr = store.address_of(path)
    return {"path": path, "size": len(data), "sha256": version_of(data),
            "kind": addr.kind.value if addr else None, "scope": store.layout.scope_of(path)}


# -- /files ------------------------------------------------------------------------

@require_token()
@api_view("GET")
def list_files(request: HttpRequest) -> HttpResponse:
    """Every file below `prefix` (a folder) that the token may read, with size and sha256."""
    tok: Token = request.token
    store = get_store()
    prefix = request.GET.get("prefix", "").strip("/")
    if prefix:
        names.validate_relpath(prefix)
    out = []
    for path in store.list_files(prefix):
        if not may_read(tok, store, path):
            continue
        data = store.read_bytes(path)
        if data is not None:
            out.append(_file_entry(store, path, data))
    return json_response({"prefix": prefix, "files": out})


@require_token()
@api_view("GET", "PUT", "DELETE")
def file_detail(request: HttpRequest, path: str) -> HttpResponse:
    tok: Token = request.token
    names.validate_relpath(path)
    store = agent_store(tok, get_store())  # its own proposals, its writes proposed
    if request.method == "PUT":
        check_write(tok, store, path)
        return _put(request, tok, store, path)
    if request.method == "DELETE":
        check_write(tok, store, path)
        return _delete(request, tok, store, path)
    check_read(tok, store, path)
    data = store.read_bytes(path)
    if data is None:
        raise ApiError("not_found", f"{path} does not exist", 404)
    tag = etag(version_of(data))
    if tag in [etag(t) for t in _tags(request.headers.get("If-None-Match", ""))]:
        resp = HttpResponse(status=304)
    else:
        ctype = "text/markdown" if path.endswith(".md") else "text/plain"
        resp = HttpResponse(data, content_type=f"{ctype}; charset=utf-8")
    resp["ETag"] = tag
    resp["Cache-Control"] = "no-cache"
    return resp


def _precondition(request: HttpRequest, store: Store | AgentStore, path: str,
                  new: str | None) -> str | None:
    """The `expect` version for the store write, from If-Match / If-None-Match."""
    current, version = store.read_versioned(path)
    if_match = request.headers.get("If-Match")
    if_none = request.headers.get("If-None-Match")
    if if_none is not None and "*" in _tags(if_none):
        if version is not None:
            raise _stale(path, current, version, new, "already exists (If-None-Match: *)")
        return ABSENT
    if if_match is None:
        if version is None:
            if new is None:
                raise ApiError("not_found", f"{path} does not exist", 404)
            return ABSENT
        verb = "replace" if new is not None else "delete"
        raise ApiError("precondition_required",
                       f"{path} exists: send If-Match with its ETag to {verb} it "
                       f"(current ETag {etag(version)})", 428, etag=etag(version))
    tags = _tags(if_match)
    if not tags:
        raise bad_request("If-Match must be a quoted ETag, e.g. If-Match: \"<sha256>\"")
    if version is None:
        raise _stale(path, None, None, new, "does not exist")
    if "*" in tags:
        return version
    if version not in tags:
        raise _stale(path, current, version, new, "changed since you loaded it")
    return version


def _stale(path: str, current: str | None, version: str | None, new: str | None,
           what: str) -> ApiError:
    """412 with the current text, its ETag and a diff from it to what you sent."""
    fd = diff_texts(current, new, path) if current is not None or new is not None else None
    return ApiError("precondition_failed", f"{path} {what}", 412, path=path, current=current,
                    etag=etag(version) if version else None,
                    diff=unified_text(fd) if fd is not None and fd.hunks else "")


def _put(request: HttpRequest, tok: Token, store: Store | AgentStore, path: str
         ) -> HttpResponse:
    ctype = request.content_type or ""
    if ctype and ctype not in TEXT_TYPES:
        raise ApiError("unsupported_media_type", f"send the file as text/markdown or "
                       f"text/plain (UTF-8), not {ctype}", 415)
    charset = (request.content_params or {}).get("charset", "utf-8").lower()
    if charset not in ("utf-8", "utf8"):
        raise ApiError("unsupported_media_type", f"only UTF-8 text is accepted, not {charset}",
                       415)
    text = read_text(request)
    res = _save(request, tok, store, path, text, "saving")
    body = {"path": path, "sha256": res.version, "etag": etag(res.version),
            "created": res.created, "changed": res.changed,
            "commit": res.commit, "write": res.record or None}
    body.update(_proposed(store))
    resp = json_response(body, status=201 if res.created else 200)
    resp["ETag"] = etag(res.version)
    return resp


def _delete(request: HttpRequest, tok: Token, store: Store | AgentStore, path: str
            ) -> HttpResponse:
    if not store.exists(path):
        if store.is_dir(path):
            raise bad_request(f"{path} is a folder, not a file")
        raise ApiError("not_found", f"{path} does not exist", 404)
    res = _save(request, tok, store, path, None, "deleting")
    return json_response({"path": path, "deleted": True, "commit": res.commit,
                          "write": res.record or None, **_proposed(store)})


def _proposed(store: Store | AgentStore) -> dict:
    """`{"proposal": id}` when the write became the token's proposal (it waits for a
    person; `commit` and `write` are null)."""
    p = getattr(store, "last_proposal", None)
    return {"proposal": p.id} if p is not None else {}


def _save(request: HttpRequest, tok: Token, store: Store | AgentStore, path: str,
          text: str | None, doing: str) -> WriteResult:
    """Write `text` (None: delete the file) as the token's author, under the request's
    preconditions and `X-Memoryui-Message`; a writer that got in first meanwhile makes it
    the stale answer, with the text now."""
    expect = _precondition(request, store, path, text)
    actor, trailers = actor_for(tok)
    new = DELETE if text is None else text
    try:
        return store.update(path, lambda _old: new, actor=actor, tool="files-api",
                            message=request.headers.get("X-Memoryui-Message") or None,
                            expect=expect, trailers=trailers)
    except Conflict as exc:
        raise _stale(path, exc.current, exc.version, text, f"changed while {doing}") from None


# -- /history and /commits -----------------------------------------------------------

def _int(request: HttpRequest, name: str, default: int, lo: int, hi: int) -> int:
    raw = request.GET.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise bad_request(f"{name} must be an integer, got {raw!r}") from None
    if not lo <= value <= hi:
        raise bad_request(f"{name} must be between {lo} and {hi}")
    return value


def _date(request: HttpRequest, name: str) -> str | None:
    raw = request.GET.get(name) or None
    if raw is None:
        return None
    if not DATE_RE.match(raw):
        raise bad_request(f"{name} must be a date (YYYY-MM-DD) or an ISO 8601 time, got {raw!r}")
    try:
        day = raw if len(raw) == 10 else dt.datetime.fromisoformat(raw.replace("Z", "+00:00"))
        parse_date(day, earliest=GIT_MIN, latest=GIT_MAX)  # git's years: it drops others
    except (ValueError, BadDate) as exc:
        raise bad_request(f"{name}: {exc}") from None
    return raw


def _commit_json(info: CommitInfo) -> dict:
    return {"sha": info.sha, "short": info.short, "parents": info.parents,
            "author": info.author, "email": info.email, "actor": info.actor,
            "tools": info.tools, "time": info.when.isoformat().replace("+00:00", "Z"),
            "timestamp": info.time, "subject": info.subject, "message": info.message,
            "trailers": info.trailers,
            "changes": [{"status": f.status, "path": f.path, "old_path": f.old_path}
                        for f in info.files]}


def _diff_json(fd: FileDiff) -> dict:
    return {"path": fd.path, "old_path": fd.old_path, "status": fd.status, "binary": fd.binary,
            "additions": fd.additions, "deletions": fd.deletions, "too_large": fd.too_large,
            "hunks": [{"header": h.header, "old_start": h.old_start, "new_start": h.new_start,
                       "lines": [{"op": ln.op, "text": ln.text, "old_no": ln.old_no,
                                  "new_no": ln.new_no} for ln in h.lines]}
                      for h in fd.hunks]}


@require_token()
@api_view("GET")
def history(request: HttpRequest) -> HttpResponse:
    """Commits newest first, filtered by path, actor, scope, kind and time."""
    tok: Token = request.token
    store = get_store()
    q = request.GET
    path = q.get("path") or None
    scope = q.get("scope") or None
    kind = q.get("kind") or None
    actor = q.get("actor") or None
    if path:
        names.validate_relpath(path)
    if scope:
        names.validate_scope(scope)
    if kind is not None:
        try:
            kind = Kind(kind)
        except ValueError:
            raise bad_request(f"unknown kind {kind!r}; use one of: "
                              f"{', '.join(k.value for k in Kind)}") from None
    if actor is not None and (len(actor) > 200 or any(ord(c) < 32 for c in actor)):
        raise bad_request("actor must be a name or kind:name, at most 200 characters")
    since, until = _date(request, "since"), _date(request, "until")
    limit = _int(request, "limit", 50, 1, MAX_LIMIT)
    offset = _int(request, "offset", 0, 0, 10**9)
    if not tok.is_admin:
        if path:
            check_read(tok, store, path)
        elif scope is None:
            scope = tok.scope  # a scope token's history is its own scope's
        if scope is not None and scope != tok.scope:
            raise forbidden(f"this token acts only for scope '{tok.scope}', not '{scope}'")
    raw = store.log(path, scope=None if path else scope, kind=None if path else kind,
                    actor=actor, since=since, until=until, limit=limit, offset=offset,
                    all_files=not tok.is_admin)  # the access check needs every file
    commits = [c for c in raw if visible(tok, store, c)]
    return json_response({
        "commits": [_commit_json(c) for c in commits], "limit": limit, "offset": offset,
        # Paging counts the commits looked at, shown or not (a scope token may see fewer).
        "next_offset": offset + len(raw) if len(raw) == limit else None,
        "filters": {"path": path, "actor": actor, "scope": scope,
                    "kind": kind.value if kind else None, "since": since, "until": until},
    })


def visible(tok: Token, store: Store, info: CommitInfo) -> bool:
    """A scope token sees a commit only if it may read every path the commit touches.

    Merge commits are never shown to scope tokens: git log lists no files of their own,
    so what they bring in cannot be checked there (default deny). Nor are commits that
    touch no file (a lead's review decisions, recorded in their trailers).
    """
    if tok.is_admin:
        return True
    if len(info.parents) > 1:
        return False
    touched = {f.path for f in info.files} | {f.old_path for f in info.files if f.old_path}
    return bool(touched) and all(may_read(tok, store, p) for p in touched)


@require_token()
@api_view("GET")
def commit_detail(request: HttpRequest, sha: str) -> HttpResponse:
    """One commit with its files, hunks and the patch text."""
    tok: Token = request.token
    if not re.fullmatch(rf"[0-9a-fA-F]{{{MIN_SHA},40}}", sha):
        raise bad_request(f"invalid commit id {sha[:80]!r}: use {MIN_SHA} to 40 hex digits")
    store = get_store()
    full = store.resolve_commit(sha.lower(), min_len=MIN_SHA)  # 404 unknown, 400 ambiguous
    detail: CommitDetail | None = store.commit(full)
    if detail is None:
        raise ApiError("not_found", f"no commit {sha}", 404)
    if not visible(tok, store, detail):
        raise forbidden(f"this token acts only for scope '{tok.scope}' and may not read "
                        "every file this commit touches")
    body = _commit_json(detail)
    body["files"] = [_diff_json(fd) for fd in detail.diffs]
    body["patch"] = detail.patch
    return json_response(body)


@require_token()
@api_view("GET")
def write_commit(request: HttpRequest, record: str) -> HttpResponse:
    """The commit that holds a write, by the `write` id its PUT or DELETE answered: null
    until the committer has made it (within a second), then its sha; answered at once."""
    if not RECORD_ID.fullmatch(record):
        raise bad_request(f"invalid write id {record[:80]!r}: use 32 lowercase hex digits")
    return json_response({"write": record, "commit": get_store().commit_for(record)})
