"""Review queue and promotion server time, beside floors measured in the same run.

Through Django's test client (whole middleware stack and templates, no network), on a fresh
copy of the corpus, the queue showing the corpus's last 7 days (50 scopes, about 350 daily
logs and 1,700 entries; 50 entries per page, grouped by day, with the sidebar):

- warm: parsed logs and rendered entries are reused while the files are unchanged (checked
  by mtime and size on every request);
- after a change: those caches and the store's tree are dropped before each sample;
- grouping of near-duplicates and "already known" marks off (`MEMORYUI_SIMILAR=0`) and on
  (the default), alternated sample by sample so the machine's load hits both alike;
- a text filter, an older page, the neighbours fragment, the promotion editor;
- one promotion end to end (POST: checks, write, commit, review rows), each into another
  scope's MEMORY.md, and one undo end to end.

Floors: reading and parsing the same 350 logs in-process (what any queue must do), and the
store's own write + commit of the same text (what any promotion must do).

Goals: queue p50 < 100 ms; one promotion < 50 ms server time. the queue
with grouping within 2x of the queue without it.

    python -m bench.bench_review --preset large
"""

from __future__ import annotations

import datetime as dt
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlencode

SAMPLES = 30
WARMUP = 3
PROMOTIONS = 20
END = dt.date(2026, 11, 20)  # the corpus's last day (bench.corpus.END_DATE)


def _ms(fn: Callable[[], object]) -> float:
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1000


def run(corpus: Path, report: Callable[..., None]) -> None:
    from bench.bench_pages import signed_in_client, warm_page

    client = signed_in_client(corpus, "review", "curator")
    from memoryui import review
    from memoryui.models import Promotion
    from memoryui.review import similar
    from memoryui.review.state import LEDGER
    from memoryui.store import Actor, Kind
    from memoryui.workspace import get_store

    store = get_store()
    since = END - dt.timedelta(days=6)
    week = {"from": since.isoformat(), "to": END.isoformat()}
    files = review.daily_files(store, since, END)
    entries = sum(len(review.entries_of(store, p)) for p, _s, _d, _st in files)
    note = f"{len(files)} logs, {entries} entries, 50 shown"

    def parse_floor() -> None:
        from memoryui.store import parse_daily
        for f in files:
            parse_daily((store.root / f.path).read_text())

    floor_parse = [_ms(parse_floor) for _ in range(SAMPLES)]
    report("floor: read + parse the week's daily logs", floor_parse, note=note)

    def drop_caches() -> None:
        review.clear_caches()
        similar.clear_caches()

    pages = [
        ("review queue, 7 days", "/review/?" + urlencode(week), {}),
        ("review queue, text filter", "/review/?" + urlencode({**week, "q": "timeout"}), {}),
        ("review queue, page 5", "/review/?" + urlencode({**week, "page": 5}), {}),
        ("review queue, one scope", "/review/?" + urlencode(
            {**week, "scope": files[0].scope}), {}),
    ]
    for name, url, headers in pages:
        first = warm_page(client, name, url, headers, WARMUP, report)
        if first is None:
            continue
        samples = [_ms(lambda url=url, headers=headers: client.get(url, **headers))
                   for _ in range(SAMPLES)]
        report(name, samples, floor="read + parse the week's logs", floor_ms=floor_parse,
               note=f"{len(first.content) // 1024} KiB; {note}")
    url = pages[0][1]
    grouped = review.build_queue(store, LEDGER, review.Filters(since, END)).grouped

    def with_similar(value: str) -> float:
        before = os.environ.get("MEMORYUI_SIMILAR")
        os.environ["MEMORYUI_SIMILAR"] = value
        try:
            return _ms(lambda: client.get(url))
        finally:
            if before is None:
                os.environ.pop("MEMORYUI_SIMILAR", None)
            else:
                os.environ["MEMORYUI_SIMILAR"] = before

    off: list[float] = []
    on: list[float] = []
    for _ in range(SAMPLES):
        off.append(with_similar("0"))
        on.append(with_similar(str(similar.threshold() or similar.DEFAULT_THRESHOLD)))
    report("review queue, 7 days, grouping off", off, note="MEMORYUI_SIMILAR=0")
    report("review queue, 7 days, grouping on", on, floor="grouping off", floor_ms=off,
           note=f"{grouped} near-duplicate entries folded into group cards; goal < 2x off")
    cold = []
    for _ in range(10):
        drop_caches()
        cold.append(_ms(lambda: client.get(url)))
    report("review queue, 7 days, cold parse/render caches", cold,
           floor="read + parse the week's logs", floor_ms=floor_parse,
           note="every log re-parsed, every shown entry re-rendered (a restart; an agent's "
                "append re-parses one log)")

    # Pick one entry per scope from the newest day for the fragment, editor and promotions.
    picks = []
    for path, scope, date, _st in sorted(files, key=lambda f: (f.date, f.scope), reverse=True):
        if date != END.isoformat():
            continue
        got = review.entries_of(store, path)
        if got:
            picks.append((scope, review.entry_key(path, got[0].id)))
    key0 = picks[0][1]
    frag = "/review/entry/?" + urlencode({"entry": key0})
    client.get(frag, HTTP_HX_REQUEST="true")
    report("neighbours fragment (htmx)",
           [_ms(lambda: client.get(frag, HTTP_HX_REQUEST="true")) for _ in range(SAMPLES)])
    editor = "/review/promote/?" + urlencode({"entry": key0, "kind": "memory",
                                             "scope": picks[0][0], "slot": "bulk"})
    assert client.get(editor, HTTP_HX_REQUEST="true").status_code == 200
    report("promotion editor (htmx fragment)",
           [_ms(lambda: client.get(editor, HTTP_HX_REQUEST="true")) for _ in range(SAMPLES)])

    # Floor: the store's own write + commit of a MEMORY.md-sized text.
    floor_write = []
    for i, (scope, _key) in enumerate(picks[:PROMOTIONS]):
        path = store.path_for(Kind.NOTE, scope, f"bench-floor-{i}")
        text = (store.read(store.path_for(Kind.MEMORY, scope)) or "") + "\nfloor\n"
        floor_write.append(_ms(lambda path=path, text=text: store.write(
            path, text, actor=Actor.user("bench-lead"), tool="edit")))
    samples = []
    for scope, key in picks[:PROMOTIONS]:
        items = review.resolve(store, LEDGER, [key])
        target = review.make_target(store, "memory", scope)
        draft = review.make_draft(target, items, None)
        data = {"entry": key, "kind": "memory", "scope": scope, "text": draft.text,
                "base": target.base, "over_budget_ok": "1"}
        t = time.perf_counter()
        r = client.post("/review/promote/", data)
        samples.append((time.perf_counter() - t) * 1000)
        assert r.status_code == 302, r.content[:300]
    report("promotion end to end (POST)", samples, floor="store.write + commit",
           floor_ms=floor_write, note=f"{len(samples)} promotions into MEMORY.md files")
    undo = []
    for promo in list(Promotion.objects.all()[:10]):
        t = time.perf_counter()
        r = client.post(f"/review/undo/{promo.pk}/")
        undo.append((time.perf_counter() - t) * 1000)
        assert r.status_code == 302
    report("undo end to end (POST)", undo, floor="store.write + commit", floor_ms=floor_write)


if __name__ == "__main__":
    from bench.run import standalone

    sys.exit(standalone(run, name="review"))
