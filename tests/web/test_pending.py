"""Pending changes: files changed outside memoryui, listed with diffs, committed or discarded."""

from __future__ import annotations

import pytest

from memoryui.web.history import pending as views
from tests.web.test_history import MEM, V3, WORLD, Seeded, git, seed

NOTE = "agents/ops-bot/memory/notes/runbook.md"


@pytest.fixture
def seeded(workspace) -> Seeded:
    return seed(workspace)


def outside_edit(seeded: Seeded) -> None:
    """An agent writing natively: MEMORY.md changed on disk, not through memoryui."""
    (seeded.store.root / MEM).write_text(V3 + "- written natively by the agent\n")


def test_pending_lists_outside_changes_with_owner_and_diff(client_as, seeded):
    outside_edit(seeded)
    r = client_as("viewer").get("/pending/")
    assert r.status_code == 200
    html = r.content.decode()
    assert f'href="/f/{MEM}"' in html
    assert '<span class="badge pending-status pending-modified">modified</span>' in html
    assert '<span class="badge badge-agent">ops-bot</span>' in html
    assert ('<tr class="add"><td class="ln"></td><td class="ln" data-line="5"></td>'
            '<td class="code">- written natively by the agent</td></tr>') in html
    # viewers read; only curators get the controls
    assert 'name="paths"' not in html and "Commit selected" not in html
    curator = client_as("curator").get("/pending/").content.decode()
    assert f'name="paths" value="{MEM}"' in curator and "Commit selected" in curator


def test_nothing_pending(client_as, seeded):
    html = client_as("viewer").get("/pending/").content.decode()
    assert "No pending changes" in html


def test_commit_attributes_the_change_to_the_owning_agent(client_as, seeded):
    store = seeded.store
    outside_edit(seeded)
    c = client_as("curator")
    r = c.post("/pending/commit", {"paths": [MEM]})
    assert r.status_code == 302
    head = store.head()
    assert r["Location"] == f"/pending/?committed={head}"
    info = store.log(MEM, limit=1)[0]
    assert info.sha == head
    assert info.author == "ops-bot" and info.email == "ops-bot@agents.memoryui"
    assert info.actor == "agent:ops-bot"
    assert git(store, "show", f"HEAD:{MEM}").endswith("- written natively by the agent\n")
    assert store.pending() == []
    page = c.get(r["Location"]).content.decode()
    assert f'href="/commit/{head}/"' in page and "No pending changes" in page
    assert "attributed to the owning scopes" in page


def test_commit_attributed_to_me_with_a_message(client_as, seeded):
    store = seeded.store
    outside_edit(seeded)
    (store.root / "memory/world/new-topic.md").write_text("# New\n")
    c = client_as("curator")
    r = c.post("/pending/commit", {"paths": [MEM, "memory/world/new-topic.md"],
                                   "attribute": "me", "message": "Take in native writes"})
    assert r.status_code == 302
    info = store.log(limit=1)[0]
    assert info.subject == "Take in native writes"
    assert info.actor == "user:curator" and info.author == "curator"
    assert {f.path for f in info.files} == {MEM, "memory/world/new-topic.md"}
    assert info.trailers["Committed-By"] == ["user:curator"]


def test_commit_an_outside_deletion(client_as, seeded):
    store = seeded.store
    (store.root / WORLD).unlink()
    html = client_as("viewer").get("/pending/").content.decode()
    assert '<span class="badge pending-status pending-deleted">deleted</span>' in html
    assert f'href="/history/{WORLD}"' in html
    client_as("curator").post("/pending/commit", {"paths": [WORLD]})
    info = store.log(WORLD, limit=1)[0]
    assert [(f.status, f.path) for f in info.files] == [("D", WORLD)]
    assert info.actor == "external:workspace"  # no scope owns a world topic


def test_discard_asks_first_then_puts_the_file_back(client_as, seeded):
    store = seeded.store
    outside_edit(seeded)
    c = client_as("curator")
    r = c.post("/pending/discard", {"paths": [MEM]})
    assert r.status_code == 200
    html = r.content.decode()
    assert "cannot be recovered" in html and 'name="confirm" value="yes"' in html
    assert "written natively" in (store.root / MEM).read_text()  # not yet
    r = c.post("/pending/discard", {"paths": [MEM], "confirm": "yes"})
    assert r.status_code == 302 and r["Location"] == "/pending/"
    assert (store.root / MEM).read_text() == V3
    assert store.pending() == []
    assert "Discarded the outside changes to 1 file(s)" in c.get("/pending/").content.decode()


def test_discard_removes_an_untracked_new_file(client_as, seeded):
    store = seeded.store
    (store.root / NOTE).parent.mkdir(parents=True)
    (store.root / NOTE).write_text("stray note\n")
    html = client_as("viewer").get("/pending/").content.decode()
    assert '<span class="badge pending-status pending-added">added</span>' in html
    r = client_as("curator").post("/pending/discard", {"paths": [NOTE], "confirm": "yes"})
    assert r.status_code == 302
    assert not (store.root / NOTE).exists()
    assert store.pending() == []


def test_discard_with_htmx_redirects_the_page(client_as, seeded):
    outside_edit(seeded)
    r = client_as("curator").post("/pending/discard", {"paths": [MEM], "confirm": "yes"},
                                  HTTP_HX_REQUEST="true")
    assert r["HX-Redirect"] == "/pending/"
    assert (seeded.store.root / MEM).read_text() == V3


def test_nothing_selected(client_as, seeded):
    outside_edit(seeded)
    c = client_as("curator")
    for url in ("/pending/commit", "/pending/discard"):
        r = c.post(url, {})
        assert r.status_code == 302 and r["Location"] == "/pending/"
    page = c.get("/pending/").content.decode()
    assert "Select at least one file" in page
    assert seeded.store.pending() != []


def test_paths_that_are_not_pending_are_ignored(client_as, seeded):
    head = seeded.store.head()
    c = client_as("curator")
    r = c.post("/pending/commit", {"paths": [WORLD]})
    assert r.status_code == 302
    assert seeded.store.head() == head
    assert "no longer have pending changes" in c.get("/pending/").content.decode()
    assert c.post("/pending/commit", {"paths": ["../../etc/passwd"]}).status_code == 400
    assert c.post("/pending/discard", {"paths": ["/etc/passwd"],
                                       "confirm": "yes"}).status_code == 400


def test_pending_diff_page_and_fragment(client_as, seeded):
    outside_edit(seeded)
    c = client_as("viewer")
    full = c.get(f"/pending/diff/{MEM}").content.decode()
    assert "<html" in full and "written natively" in full
    frag = c.get(f"/pending/diff/{MEM}", HTTP_HX_REQUEST="true")
    body = frag.content.decode()
    assert frag.status_code == 200 and "<html" not in body and "written natively" in body
    assert c.get(f"/pending/diff/{WORLD}").status_code == 404  # not pending
    assert c.get("/pending/diff/../x").status_code == 400


def test_many_pending_files_load_later_diffs_on_demand(client_as, seeded, monkeypatch):
    monkeypatch.setattr(views, "PENDING_INLINE_DIFFS", 1)
    outside_edit(seeded)
    (seeded.store.root / WORLD).write_text("changed outside\n")
    html = client_as("viewer").get("/pending/").content.decode()
    assert html.count('class="diff diff-unified"') == 1
    assert f'hx-get="/pending/diff/{WORLD}"' in html and f'href="/pending/diff/{WORLD}"' in html


def test_a_huge_rewrite_is_listed_without_drawing_its_diff(client_as, seeded, settings):
    settings.MEMORYUI_RENDER_LIMIT = 50
    (seeded.store.root / MEM).write_text("x" * 60 + "\n")
    html = client_as("viewer").get("/pending/").content.decode()
    assert f'href="/f/{MEM}"' in html
    assert "Large diff" in html and 'class="diff diff-unified"' not in html


def test_a_symbolic_link_is_refused_with_its_reason_and_can_only_be_discarded(client_as, seeded,
                                                                              tmp_path):
    """A link planted by a native writer: listed as refused, never read, never committed."""
    store = seeded.store
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("TOP SECRET KEY\n")
    link = store.root / NOTE
    link.parent.mkdir(parents=True)
    link.symlink_to(secret)
    outside_edit(seeded)
    c = client_as("curator")
    r = c.get("/pending/")
    assert r.status_code == 200
    html = r.content.decode()
    refused = html[html.index('<section class="pending-refused"'):]
    assert "Refused: a symbolic link: memoryui never follows links; discard it." in refused
    assert refused.count(f">{NOTE}<") == 1  # the path is named once
    assert f'<input type="hidden" name="paths" value="{NOTE}">' in refused
    assert ">Discard</button>" in refused
    assert f'name="paths" value="{NOTE}" id=' not in html  # no commit checkbox for it
    assert f'name="paths" value="{MEM}" id=' in html  # the other change stays committable
    assert "TOP SECRET" not in html
    # committing it anyway commits only the regular file and says why
    r = c.post("/pending/commit", {"paths": [NOTE, MEM]})
    assert r.status_code == 302
    page = c.get(r["Location"]).content.decode()
    assert f"Not committed: {NOTE} is a symbolic link" in page
    assert "Committed 1 file(s)" in page
    assert "TOP SECRET" not in git(store, "log", "-p", "--all")
    assert [e.path for e in store.pending()] == [NOTE]
    # discarding removes the link, never what it points to
    r = c.post("/pending/discard", {"paths": [NOTE]})
    assert r.status_code == 200 and f'value="{NOTE}"' in r.content.decode()  # asks first
    r = c.post("/pending/discard", {"paths": [NOTE], "confirm": "yes"})
    assert r.status_code == 302
    assert not link.is_symlink() and not link.exists()
    assert secret.read_text() == "TOP SECRET KEY\n"
    assert store.pending() == []


def test_a_linked_folder_is_refused_for_every_file_below_it(client_as, seeded, tmp_path):
    store = seeded.store
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "k.md").write_text("TOP SECRET KEY\n")
    (store.root / "agents/ops-bot/memory/notes").symlink_to(outside, target_is_directory=True)
    html = client_as("viewer").get("/pending/").content.decode()
    assert "pending-item-refused" in html and "a symbolic link" in html
    assert "TOP SECRET" not in html
    assert 'name="paths"' not in html.split('<section class="pending-refused"')[0]


def _item_html(html: str, path: str) -> str:
    """The `<li>` of one pending item."""
    start = html.index(f'id="{views.anchor_for(path)}"')
    return html[start:html.index("</li>", start)]


def test_each_pending_path_is_named_once(client_as, seeded):
    outside_edit(seeded)
    html = client_as("curator").get("/pending/").content.decode()
    item = _item_html(html, MEM)
    assert item.count(f">{MEM}<") == 1 and "written natively" in item
    assert html.count(f'id="{views.anchor_for(MEM)}"') == 1
    frag = client_as("viewer").get(f"/pending/diff/{MEM}", HTTP_HX_REQUEST="true")
    assert MEM not in frag.content.decode()  # the item it lands in names the file already


def test_a_change_that_adds_a_secret_is_flagged_before_commit(client_as, seeded):
    from tests.secrets.samples import AWS

    (seeded.store.root / MEM).write_text(V3 + f"- deploy key {AWS}\n")
    (seeded.store.root / WORLD).write_text("changed outside, nothing secret\n")
    html = client_as("curator").get("/pending/").content.decode()
    flagged = _item_html(html, MEM)
    assert "pending-secrets" in flagged and "Secret: AWS Access Key (line 5)" in flagged
    assert "once committed, history keeps it" in flagged
    assert "pending-secrets" not in _item_html(html, WORLD)
    assert AWS not in html.replace(f"deploy key {AWS}", "")  # only the diff shows the value


def test_a_hard_link_is_refused_and_the_commit_form_gives_way_to_a_sentence(
        client_as, seeded, tmp_path):
    import os

    store = seeded.store
    secret = tmp_path / "secret.key"
    secret.write_text("TOP SECRET KEY\n")
    (store.root / NOTE).parent.mkdir(parents=True)
    os.link(secret, store.root / NOTE)
    c = client_as("curator")
    html = c.get("/pending/").content.decode()
    refused = html[html.index('<section class="pending-refused"'):]
    assert "Refused: a hard link" in refused and "never reads or commits it" in refused
    assert "TOP SECRET" not in html
    assert "Commit selected" not in html and 'action="/pending/commit"' not in html
    assert "Nothing here can be committed" in html
    r = c.post("/pending/discard", {"paths": [NOTE], "confirm": "yes"})
    assert r.status_code == 302
    assert not (store.root / NOTE).exists() and secret.read_text() == "TOP SECRET KEY\n"
    assert store.pending() == []
