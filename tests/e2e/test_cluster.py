"""Three memoryui instances on one remote and one Postgres, plus a native agent host.

The tests of this module share one cluster (tests/e2e/conftest.py); each leaves it settled
and none needs another to have run (under xdist a second worker would start its own
cluster: `--dist loadgroup` keeps them on one, see the group mark). Everything is real: `serve` processes, `git daemon`, smart HTTP with a
password, file://, Postgres, Chromium.
"""

from __future__ import annotations

import re
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import new_context
from tests.e2e.cluster import PASSWORD, Instance, describe, remote_tips, settled, wait_until
from tests.e2e.conftest import SCOPES, Cluster
from tests.sync_fixtures import fsck_clean, git, is_ancestor

pytestmark = pytest.mark.xdist_group("e2e-cluster")

WRITE_SECONDS = 6.0  # how long agents and the native host write concurrently
SETTLE = 120.0  # deadline for the rounds to settle (a bound, not a pace)
MARK = re.compile(r"\[(e2e-[a-z0-9-]+)\]")


def _daily_texts(repo, rev: str = "main") -> dict[str, str]:
    names = git(repo, "ls-tree", "-r", "--name-only", rev, "agents/").split("\n")
    return {n: git(repo, "show", f"{rev}:{n}") for n in names if "/memory/daily/" in n}


def _agent(inst: Instance, token: str, scope: str, stop_at: float, acked: list[str],
           failed: list[str]) -> None:
    n = 0
    while time.monotonic() < stop_at:
        mark = f"e2e-{inst.name}-{scope}-{n}"
        status, body = inst.call_tool(token, scope, "remember",
                                      {"content": f"[{mark}] seen on instance {inst.name} "
                                                  f"word{mark.replace('-', '')}"})
        (acked if status == 200 else failed).append(mark if status == 200 else
                                                    f"{mark}: {status} {body}")
        n += 1


def _native(cluster: Cluster, stop_at: float, acked: list[str], failed: list[str]) -> None:
    n = 0
    try:
        while time.monotonic() < stop_at:
            mark = f"e2e-native-{n}"
            cluster.native.remember(f"[{mark}] written natively")
            cluster.native.commit(f"native: remember {n}")
            cluster.native.push()
            acked.append(mark)
            n += 1
    except AssertionError as exc:  # a push that kept being rejected
        failed.append(str(exc))


def _settle(cluster: Cluster) -> str:
    def done() -> bool:
        cluster.native.pull()
        return settled(cluster.instances, cluster.bare,
                       lambda: cluster.native.head() == git(cluster.bare, "rev-parse",
                                                            "main").strip())
    wait_until(done, SETTLE, "every instance and the native host to reach the remote's tip",
               explain=lambda: describe(cluster.instances, cluster.bare))
    return git(cluster.bare, "rev-parse", "main").strip()


def test_agents_on_every_instance_and_a_native_host_converge(cluster: Cluster) -> None:
    acked: list[str] = []
    failed: list[str] = []
    stop_at = time.monotonic() + WRITE_SECONDS
    threads = [threading.Thread(target=_agent, args=(inst, cluster.tokens[scope], scope,
                                                     stop_at, acked, failed))
               for inst in cluster.instances for scope in SCOPES]
    threads.append(threading.Thread(target=_native, args=(cluster, stop_at, acked, failed)))
    for t in threads:
        t.start()
    for t in threads:
        t.join(WRITE_SECONDS + 300)
    assert not failed, failed[:5]
    # every instance took writes with the same tokens (they live in the shared Postgres)
    for inst in cluster.instances:
        assert any(m.startswith(f"e2e-{inst.name}-") for m in acked), inst.name
    assert any(m.startswith("e2e-native-") for m in acked)

    final = _settle(cluster)
    texts = _daily_texts(cluster.bare, final)
    counts = Counter(MARK.findall("".join(texts.values())))
    missing = [m for m in acked if counts[m] == 0]
    twice = {m: n for m, n in counts.items() if n > 1}
    assert not missing, f"{len(missing)} acknowledged entries lost: {missing[:5]}"
    assert not twice, f"entries written more than once: {list(twice.items())[:5]}"
    for path, text in texts.items():  # one header, entries whole and in time order
        day = path.rsplit("/", 1)[1][:-3]
        assert text.startswith(f"# {day}\n"), path
        assert len(re.findall(r"(?m)^# \d{4}-\d{2}-\d{2}$", text)) == 1, path
        times = re.findall(r"(?m)^## (\d{2}:\d{2})$", text)
        assert times == sorted(times), path
        assert len(times) == text.count("\n## "), path

    # no push ever dropped a commit: every tip the remote had is in the final history
    tips = remote_tips(cluster.tips)
    assert len(tips) > 3
    assert all(is_ancestor(cluster.bare, t, final) for t in tips)
    # every instance and the native host hold the same tree; nothing is damaged
    tree = git(cluster.bare, "rev-parse", f"{final}^{{tree}}").strip()
    assert {inst.tree() for inst in cluster.instances} == {tree}
    for repo in [cluster.bare, cluster.native.path, *(i.workspace for i in cluster.instances)]:
        fsck_clean(repo)
    # and every instance serves the same memory to its agents
    recalls = {inst.name: inst.call_tool(cluster.tokens["ops-bot"], "ops-bot", "recall",
                                         {"days": 1})[1]["result"]
               for inst in cluster.instances}
    assert len(set(recalls.values())) == 1, "instances answer recall differently"
    last_a = [m for m in acked if m.startswith("e2e-a-ops-bot-")][-1]
    assert f"[{last_a}]" in recalls["c"]
    # search on instance c finds what an agent wrote on instance a
    word = "word" + last_a.replace("-", "")

    def found() -> bool:
        status, raw = cluster.c.request("GET", f"/api/v1/search?q={word}", headers={
            "Authorization": f"Bearer {cluster.tokens['ops-bot']}"})
        return status == 200 and f"[{last_a}]" in raw.decode()
    wait_until(found, 60, "instance c's search to find an entry written on instance a")
    # the native host's entries arrived via the remote and wait in the review queue
    last_native = [m for m in acked if m.startswith("e2e-native-")][-1]
    wait_until(lambda: f"[{last_native}]" in _page(cluster, cluster.b,
                                                   "/review/?scope=native-bot"),
               60, "the native host's newest entry in instance b's review queue")


MEM = "agents/ops-bot/memory/MEMORY.md"


def _page(cluster: Cluster, inst: Instance, path: str) -> str:
    """A page as the curator sees it on `inst` (kept for the password check)."""
    status, html = inst.page(cluster.cookie(inst), path)
    assert status == 200, (path, status)
    cluster.pages.append(html)
    return html


def _remember(cluster: Cluster, inst: Instance, tag: str, count: int) -> list[str]:
    marks = []
    for n in range(count):
        mark = f"e2e-{tag}-{n}"
        status, body = inst.call_tool(cluster.tokens["ops-bot"], "ops-bot", "remember",
                                      {"content": f"[{mark}] written on {inst.name}"})
        assert status == 200, body
        marks.append(mark)
    return marks


def _on_remote(cluster: Cluster, marks: list[str]) -> bool:
    counts = Counter(MARK.findall("".join(_daily_texts(cluster.bare).values())))
    return all(counts[m] == 1 for m in marks)


def _real(errors: list[str]) -> list[str]:
    """Console errors that are the page's fault. A static file edited on disk while a
    server runs (a shared working tree during development) is served with its old length;
    that is not something a deployment sees."""
    return [e for e in errors if "ERR_CONTENT_LENGTH_MISMATCH" not in e]


def test_remote_unreachable_writes_go_on_badge_fails_then_all_is_pushed(cluster: Cluster
                                                                         ) -> None:
    b = cluster.b
    cluster.http.stop()  # b reaches the remote over HTTP only: it is cut off
    try:
        outage = _remember(cluster, b, "outage", 5)  # agent writes go on

        def failing() -> bool:
            return 'class="sync-badge sync-failing"' in _page(cluster, b, "/")
        wait_until(failing, 60, "instance b's badge to say sync is failing")
        overview = _page(cluster, b, "/")
        assert re.search(r'<small class="sync-error">[^<]+</small>', overview)
        page = _page(cluster, b, "/sync/")
        assert 'id="sync-error"' in page and "The last round failed" in page
        assert f"alice:***@127.0.0.1:{cluster.http.port}/memory.git" in page
        # `manage.py sync` from cron says it failed, with a non-zero exit and no password
        cron = b.manage_out("sync")
        assert cron.returncode != 0, cron.stdout
        assert "FAILED" in cron.stdout + cron.stderr
        assert cluster.http.password not in cron.stdout + cron.stderr
        cluster.outputs.append(cron.stdout + cron.stderr)
        assert not _on_remote(cluster, outage[:1])
        outage += _remember(cluster, b, "outage-more", 2)
    finally:
        cluster.http.start()  # the same port again
    wait_until(lambda: _on_remote(cluster, outage), 60, "b's outage writes on the remote")
    wait_until(lambda: settled(cluster.instances, cluster.bare), SETTLE, "the cluster to settle",
               explain=lambda: describe(cluster.instances, cluster.bare))
    wait_until(lambda: 'class="sync-badge sync-synced"' in _page(cluster, b, "/"), 60,
               "b's badge to say synced again")
    assert "The last round failed" not in _page(cluster, b, "/sync/")


def test_same_line_conflict_shows_on_the_instance_that_fetched_second_and_is_resolved_in_the_browser(
        cluster: Cluster, browser) -> None:
    from tests.browser.conftest import watch_console

    a, b, c = cluster.a, cluster.b, cluster.c
    cluster.native.pull()
    base = cluster.native.read(MEM)
    assert base is not None and "- deploys on Fridays" in base
    ours = base.replace("- deploys on Fridays", "- deploys on Tuesdays")
    theirs = base.replace("- deploys on Fridays", "- deploys on Mondays")
    merged = base.replace("- deploys on Fridays", "- deploys on Mondays and Tuesdays")
    cluster.http.stop()  # b edits while cut off, so the native host's edit lands first
    try:
        status, body = b.call_tool(cluster.tokens["ops-bot"], "ops-bot", "reflect",
                                   {"content": ours})
        assert status == 200, body
        cluster.native.write(MEM, theirs)
        cluster.native.commit("native: deploys on Mondays")
        cluster.native.push()
        wait_until(lambda: settled([a, c], cluster.bare), SETTLE,
                   "instances a and c to take in the native host's edit",
                   explain=lambda: describe([a, c], cluster.bare))
        assert a.call_tool(cluster.tokens["ops-bot"], "ops-bot", "reflect", {})[1][
            "result"].count("deploys on Mondays") == 1
    finally:
        cluster.http.start()
    conflict_href = f'href="/sync/conflict/{MEM}"'
    wait_until(lambda: conflict_href in _page(cluster, b, "/sync/"), 60,
               "the sync conflict on b's Sync page")
    assert 'class="sync-badge sync-conflict"' in _page(cluster, b, "/")
    # agent writes go on during the conflict; nothing of b's side reaches the remote
    during = _remember(cluster, b, "during-conflict", 3)
    assert "deploys on Mondays" in git(cluster.bare, "show", f"main:{MEM}")
    assert not _on_remote(cluster, during[:1])

    # a curator resolves it in a real browser
    ctx = new_context(browser)
    try:
        page = ctx.new_page()
        errors = watch_console(page)
        page.goto(f"{b.base_url}/accounts/login/")
        page.fill("input[name=username]", "lead")
        page.fill("input[name=password]", PASSWORD)
        page.click("button[type=submit], input[type=submit]")
        page.wait_for_url(lambda url: "/accounts/login/" not in url)
        expect(page.locator("#sync-badge")).to_contain_text("sync conflict")
        assert page.locator("#sync-badge").inner_text().strip().startswith("sync conflict")
        page.click("#sync-badge")
        page.wait_for_url(f"{b.base_url}/sync/")
        page.click(f'a[href="/sync/conflict/{MEM}"]')
        page.wait_for_url(f"{b.base_url}/sync/conflict/{MEM}")
        start = page.input_value("#editor-text")
        assert "<<<<<<< this instance" in start and ">>>>>>> the remote" in start
        assert "deploys on Tuesdays" in page.input_value("#merge-ours")
        assert "deploys on Mondays" in page.input_value("#merge-theirs")
        assert "deploys on Fridays" in page.input_value("#merge-base")
        page.click("#merge-save")  # with the markers still in: refused, nothing saved
        expect(page.locator("#merge-error")).to_contain_text("still contains conflict markers")
        assert [e for e in _real(errors) if "status of 400" not in e] == [], errors
        errors.clear()  # (the 400 is the refusal itself)
        page.fill("#editor-text", merged)
        page.fill("#editor-message", "sync: Mondays and Tuesdays")
        page.click("#merge-save")
        page.wait_for_url(f"{b.base_url}/sync/")
        expect(page.locator("#messages")).to_contain_text("Resolved")
        assert not _real(errors), errors
    finally:
        ctx.close()

    # the resolution reaches the remote, every instance and the native host
    wait_until(lambda: git(cluster.bare, "show", f"main:{MEM}") == merged, 60,
               "the resolution on the remote")

    def everywhere() -> bool:
        cluster.native.pull()
        return settled(cluster.instances, cluster.bare) and cluster.native.read(MEM) == merged
    wait_until(everywhere, SETTLE, "the resolution on every instance and the native host",
               explain=lambda: describe(cluster.instances, cluster.bare))
    assert _on_remote(cluster, during)
    info = git(cluster.bare, "log", "-1", "--format=%an%n%B", "main", "--", MEM)
    assert info.startswith("lead\nsync: Mondays and Tuesdays")
    assert "Resolves-Sync-Conflict:" in info
    assert all(is_ancestor(cluster.bare, t, git(cluster.bare, "rev-parse", "main").strip())
               for t in remote_tips(cluster.tips))
    assert conflict_href not in _page(cluster, b, "/sync/")


def test_the_password_is_never_printed(cluster: Cluster) -> None:
    secret = cluster.http.password
    b = cluster.b
    with ThreadPoolExecutor(2) as pool:  # two processes: each mostly imports Django
        status, once = pool.map(lambda args: b.manage_out(*args), [("sync", "--status"),
                                                                   ("sync",)])
    assert status.returncode == 0 and once.returncode == 0, status.stderr + once.stderr
    assert f"alice:***@127.0.0.1:{cluster.http.port}" in status.stdout
    cluster.outputs += [status.stdout + status.stderr, once.stdout + once.stderr]
    for path in ("/sync/", "/", "/activity/", f"/history/{MEM}"):
        _page(cluster, b, path)
    for where, text in [*(("page", p) for p in cluster.pages),
                        *(("command output", o) for o in cluster.outputs),
                        *((f"log of {i.name}", i.log_text()) for i in cluster.instances)]:
        assert secret not in text, f"the password appears in a {where}"
    assert "sync" in b.log_text().lower()  # b did log about sync (the outage)
    assert secret not in (b.workspace / ".git" / "config").read_text()  # nor kept in the clone
