"""Blame: "blame before this change" (the file at the commit's parent, at the matching line),
blame at an old commit, and line anchors on blame and the file's Source view.

A real git workspace with backdated commits, read through the Django test client.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import html as htmllib
import re
import subprocess
from dataclasses import dataclass

import pygit2
import pytest

from memoryui.store import Actor, Store, blame

T0 = dt.datetime(2026, 1, 5, 9, 0, tzinfo=dt.UTC).timestamp()
DAY = 86_400.0
OPS, ALICE = Actor.agent("ops-bot"), Actor.user("alice")
MEM = "agents/ops-bot/memory/MEMORY.md"
WORLD = "memory/world/payments.md"
V1 = "# Ops\n\n- one\n- two\n- three\n"
# v2 inserts "intro" below line 1 and rewrites "- two": new lines 2 and 5 are its own
V2 = "# Ops\nintro\n\n- one\n- TWO\n- three\n"


@dataclass
class Seeded:
    store: Store
    shas: dict[str, str]


def git(store: Store, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=store.root, capture_output=True, text=True,
                          check=True).stdout.strip()


@pytest.fixture
def seeded(workspace) -> Seeded:
    s = {"mem1": workspace.write(MEM, V1, actor=OPS, tool="reflect", when=T0).commit,
         "world": workspace.write(WORLD, "# Payments\n\nrefunds take 3 days\n", actor=ALICE,
                                  tool="update_world", when=T0 + DAY).commit,
         "mem2": workspace.write(MEM, V2, actor=ALICE, tool="edit", message="Say hello",
                                 when=T0 + 2 * DAY).commit}
    assert all(s.values())
    return Seeded(workspace, s)


def before_links(html: str) -> list[str]:
    return [htmllib.unescape(h) for h in re.findall(r'class="blame-before" href="([^"]+)"', html)]


def rows(html: str) -> dict[int, str]:
    """Line number -> text, read from the `tr#L<n>` rows with their `#L<n>` anchors."""
    found = re.findall(r'<tr id="L(\d+)"[^>]*>.*?<a href="#L\1">\1</a></td>\s*'
                       r'<td class="code">([^<]*)</td>', html, flags=re.S)
    return {int(n): htmllib.unescape(text) for n, text in found}


def test_blame_before_links_to_the_parent_at_the_matching_line(client_as, seeded):
    html = client_as("viewer").get(f"/blame/{MEM}").content.decode()
    parent = git(seeded.store, "rev-parse", f"{seeded.shas['mem2']}^")
    assert parent == seeded.shas["world"]
    # blocks: 1 (mem1) · 2 intro (mem2) · 3-4 (mem1) · 5 - TWO (mem2) · 6 (mem1)
    links = before_links(html)
    assert f"/blame/{MEM}?rev={parent}#L1" in links  # "intro" was inserted below line 1
    assert f"/blame/{MEM}?rev={parent}#L4" in links  # "- TWO" replaced line 4, "- two"
    assert len(links) == 2  # mem1's blocks: the file's first commit, nothing before it
    assert "↶ blame before this change" in html


def test_following_the_link_shows_the_older_blame_at_that_line(client_as, seeded):
    c = client_as("viewer")
    link = before_links(c.get(f"/blame/{MEM}").content.decode())[-1]
    url, _, anchor = link.partition("#")
    r = c.get(url)
    assert r.status_code == 200
    html = r.content.decode()
    assert rows(html) == dict(enumerate(V1.splitlines(), start=1))
    assert rows(html)[int(anchor[1:])] == "- two"  # the line "- TWO" replaced
    assert f'href="/commit/{seeded.shas["world"]}/"' in html  # "at <commit>" in the header
    assert "The file as it was at commit" in html
    assert f'href="/commit/{seeded.shas["mem1"]}/?path=' in html
    assert f'href="/commit/{seeded.shas["mem2"]}/?path=' not in html
    assert f'href="/blame/{MEM}">Blame the current version' in html


def test_a_file_added_by_a_later_commit_says_so_instead_of_a_link(client_as, seeded):
    html = client_as("viewer").get(f"/blame/{WORLD}").content.decode()
    assert seeded.store.file_at(WORLD, f"{seeded.shas['world']}^") is None
    assert "This change added the file" in html
    assert before_links(html) == []


def test_the_root_commit_has_no_way_back(client_as, seeded):
    root = git(seeded.store, "rev-list", "--max-parents=0", "HEAD")
    html = client_as("viewer").get(f"/blame/{MEM}?rev={root}").content.decode()
    assert root == seeded.shas["mem1"]  # the workspace's first commit added the file
    assert "This change added the file" not in html and "blame-before" not in html
    assert before_links(html) == []
    assert rows(html) == dict(enumerate(V1.splitlines(), start=1))


def test_lines_map_through_deletions_and_rewrites(tmp_path):
    """The mapping itself, on a plain repository: lines removed above, lines rewritten."""
    repo = tmp_path / "r"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    old = "".join(f"line {n}\n" for n in range(1, 11))
    new = old.replace("line 2\nline 3\n", "").replace("line 7\n", "line seven\nextra\n")
    def commit(text: str) -> str:
        (repo / "f.md").write_text(text)
        subprocess.run(["git", "-C", str(repo), "add", "f.md"], check=True)
        subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t",
                        "commit", "-qm", "c"], check=True)
        return subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], check=True,
                              capture_output=True, text=True).stdout.strip()

    shas = [commit(old), commit(new)]
    lines = blame.blame_lines(repo, "f.md")
    assert [ln.text for ln in lines] == new.splitlines()
    mine = [ln for ln in lines if ln.sha == shas[1]]
    assert [(ln.line_no, ln.text) for ln in mine] == [(5, "line seven"), (6, "extra")]
    assert all(ln.prev_sha == shas[0] and ln.prev_path == "f.md" for ln in mine)
    assert all(ln.boundary for ln in lines if ln.sha == shas[0])
    mapped = blame.lines_before(pygit2.Repository(str(repo)), shas[1], "f.md", shas[0],
                                "f.md", [1, 2, 5, 6, 8, 99])
    # unchanged lines shift past the deletion; the rewrite lands on the line it replaced;
    # the extra line on the last line of the rewritten run; far past the end: the last line
    assert mapped == [1, 4, 7, 7, 9, 10]


def test_short_commit_ids_work(client_as, seeded):
    r = client_as("viewer").get(f"/blame/{MEM}?rev={seeded.shas['world'][:7]}")
    assert r.status_code == 200
    assert rows(r.content.decode())[4] == "- two"


def test_every_line_has_an_id_and_an_anchor_on_blame_and_source(client_as, seeded):
    c = client_as("viewer")
    blame = c.get(f"/blame/{MEM}").content.decode()
    assert rows(blame) == dict(enumerate(V2.splitlines(), start=1))
    source = c.get(f"/f/{MEM}?view=raw").content.decode()
    assert rows(source) == dict(enumerate(V2.splitlines(), start=1))
    for page in (blame, source):  # ranges and the shift-click need the script, no inline JS
        assert "data-lines" in page
        assert re.search(r'<script src="/static/memoryui/lines\.js[^"]*" defer></script>', page)
        assert 'href="/static/memoryui/lines.css' in page
        assert "<script>" not in page and "style=" not in page


def test_markup_in_any_line_of_a_block_is_shown_as_text(client_as, workspace):
    """The rows after a block's first are written outside the template engine: they must be
    escaped exactly as it escapes."""
    text = "# <b>bold</b>\n<script>alert('x')</script>\n& \"quoted\"\n"
    workspace.write(MEM, text, actor=OPS, tool="reflect", when=T0)
    page = client_as("viewer").get(f"/blame/{MEM}").content.decode()
    assert rows(page) == dict(enumerate(text.splitlines(), start=1))
    assert "<script>alert" not in page and "<b>bold" not in page
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page


def _colliding_blobs(store: Store) -> str:
    """Write two blobs whose ids share 7 hex digits; return that prefix."""
    seen: dict[str, bytes] = {}
    i = 0
    while True:
        data = f"collide {i}\n".encode()
        sha = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
        if sha[:7] in seen:
            store.git.create_blob(seen[sha[:7]])
            store.git.create_blob(data)
            return sha[:7]
        seen[sha[:7]] = data
        i += 1


@pytest.mark.parametrize(("rev", "status", "says"), [
    ("zzzzzzz", 400, "invalid commit id"),
    ("abc12", 400, "too short"),
    ("a" * 41, 400, "invalid commit id"),
    ("0000000", 404, "no commit"),
    ("../../etc", 400, "invalid commit id"),
])
def test_bad_revisions_are_refused_clearly(client_as, seeded, rev, status, says):
    r = client_as("viewer").get(f"/blame/{MEM}", {"rev": rev})
    assert r.status_code == status
    assert says in r.content.decode()


def test_an_ambiguous_commit_id_asks_for_more_digits(client_as, seeded):
    prefix = _colliding_blobs(seeded.store)
    r = client_as("viewer").get(f"/blame/{MEM}", {"rev": prefix})
    assert r.status_code == 400
    assert "ambiguous" in r.content.decode()


def test_a_file_that_did_not_exist_at_the_commit_is_not_found(client_as, seeded):
    r = client_as("viewer").get(f"/blame/{WORLD}", {"rev": seeded.shas["mem1"]})
    assert r.status_code == 404
    assert "did not exist at commit" in r.content.decode()


def test_a_commit_that_is_not_a_commit_is_not_found(client_as, seeded):
    blob = git(seeded.store, "rev-parse", f"HEAD:{MEM}")
    assert client_as("viewer").get(f"/blame/{MEM}", {"rev": blob}).status_code == 404


def test_who_may_read_blame(client, client_as, make_token, seeded):
    anonymous = client.get(f"/blame/{MEM}?rev={seeded.shas['world']}")
    assert anonymous.status_code == 302 and "/login" in anonymous["Location"]
    # a scope token is for the agent API: it never opens another scope's blame (nor its own)
    other = make_token("billing-agent")
    r = client.get(f"/blame/{MEM}", HTTP_AUTHORIZATION=f"Bearer {other}")
    assert r.status_code in (302, 401, 403)
    assert "- TWO" not in r.content.decode()
    assert client_as("viewer").get(f"/blame/{MEM}?rev={seeded.shas['world']}").status_code == 200
