"""Page render time of the browser UI (issue 3), beside the git CLI floor.

Server time per page through Django's test client (the whole middleware stack and template
rendering, no network), signed in as a viewer, on a copy of the corpus:

- warm: the store's cached tree and the hierarchy built from it are reused, as they are for
  every request until HEAD moves, memoryui writes, or the tree's 5-second TTL runs out;
- after a change: the tree cache is dropped before each sample, so the page pays the one
  directory walk (every file's size and mtime) that a write or an outside change costs.

The floor is `git log -1 -- <path>` by the git CLI for one file: what a page that ran one git
command per file would pay for every file it lists.

Other areas add their pages to `PAGES` (name, URL template): `{file}`, `{daily}`, `{scope}` and
`{sha}` are filled in from the corpus. A page that does not answer 200 is reported as skipped.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

SAMPLES = 40
COLD_SAMPLES = 8
FLOOR_SAMPLES = 20

# (name, URL template, also measure after a change?)
PAGES: list[tuple[str, str, bool]] = [
    ("overview /", "/", True),
    ("scope page /s/{scope}/", "/s/{scope}/", True),
    ("file page /f/{file} (MEMORY.md)", "/f/{file}", True),
    ("file page, raw view", "/f/{file}?view=raw", False),
    ("file page /f/{daily} (daily log)", "/f/{daily}", False),
    ("editor /edit/{file}", "/edit/{file}", False),
    # Pages of the history area (issue 3, the other half): measured when they answer 200.
    ("file history /history/{file}", "/history/{file}", False),
    ("scope history /s/{scope}/history/", "/s/{scope}/history/", False),
    ("activity feed /activity/", "/activity/", False),
    ("commit diff /commit/{sha}/", "/commit/{sha}/", False),
]


def _django(corpus: Path, var: Path) -> None:
    """Point Django (set up here, or already by another benchmark) at this corpus."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryui.settings")
    from django.conf import settings

    if not settings.configured or "MEMORYUI_VAR_DIR" not in os.environ:
        os.environ.setdefault("MEMORYUI_VAR_DIR", str(var))
    os.environ["MEMORYUI_WORKSPACE"] = str(corpus)
    import django

    django.setup()
    settings.MEMORYUI_WORKSPACE = corpus
    settings.MEMORYUI_LAYOUT = "duragent"
    if "testserver" not in settings.ALLOWED_HOSTS:
        settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)
    from memoryui.workspace import reset_store

    reset_store()


def _ms(fn: Callable[[], object]) -> float:
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1000


def _floor(corpus: Path, path: str) -> list[float]:
    cmd = ["git", "-C", str(corpus), "log", "-1", "--format=%H %an %at %s", "--", path]
    subprocess.run(cmd, capture_output=True, check=True)  # warm the page cache
    return [_ms(lambda: subprocess.run(cmd, capture_output=True, check=True))
            for _ in range(FLOOR_SAMPLES)]


def run(corpus: Path, report: Callable[..., None]) -> None:
    var = Path(tempfile.mkdtemp(prefix="memoryui-bench-pages-"))
    _django(corpus, var)
    from django.test import Client

    from memoryui.management.commands.user import set_person
    from memoryui.web import hierarchy
    from memoryui.workspace import get_store

    store = get_store()
    client = Client()
    client.force_login(set_person("bench-viewer", "viewer", "bench-password-1"))
    h = hierarchy.build(store)
    node = max(h.scope_list(), key=lambda n: n.files)
    memory = node.memory.path if node.memory else next(iter(h.by_path))
    daily = node.daily[0].path if node.daily else memory
    values = {"scope": quote(node.name), "file": quote(memory), "daily": quote(daily),
              "sha": store.head() or ""}
    floor = _floor(corpus, memory)
    floor_name = "git log -1 -- <one file>"
    report(f"{h.files} files, {len(h.scopes)} scopes; floor per file", floor,
           note="what one git command per listed file would cost, each")
    for name, template, cold in PAGES:
        url = template.format(**values)
        first = client.get(url)
        if first.status_code != 200:
            report(name, None, note=f"skipped: {url} answered {first.status_code}")
            continue
        samples = [_ms(lambda url=url: client.get(url)) for _ in range(SAMPLES)]
        report(name + " (warm)", samples, floor=floor_name, floor_ms=floor,
               note=f"{len(first.content) // 1024} KiB of HTML")
        if cold:
            after = []
            for _ in range(COLD_SAMPLES):
                store._tree_cache = None  # what a write or the tree TTL does
                after.append(_ms(lambda url=url: client.get(url)))
            report(name + " (after a change)", after, floor=floor_name, floor_ms=floor,
                   note="re-walks the tree: sizes + mtimes of every file")
    walk = []
    for _ in range(COLD_SAMPLES):
        store._tree_cache = None
        walk.append(_ms(store.tree))
    report("store.tree() re-walk alone", walk,
           note=f"median {statistics.median(walk):.0f} ms of the 'after a change' figures")


if __name__ == "__main__":
    from bench.run import standalone

    sys.exit(standalone(run, name="pages"))
