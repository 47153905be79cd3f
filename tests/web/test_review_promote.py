"""Promoting review entries in the editor: drafts, provenance commits, conflicts, refusals."""

from __future__ import annotations

import pytest

from memoryui.models import Promotion, ReviewState
from memoryui.store import Actor, Kind, Store, parse_daily, promote, skills
from memoryui.store.workspace import version_of
from tests.web.reviewer import editor_fields, promote_end_to_end, promote_url, queue_url, save
from tests.web.reviewing import D1, D2, MEMORY, seed

pytestmark = pytest.mark.django_db


@pytest.fixture
def seeded(workspace: Store) -> dict[str, str]:
    return seed(workspace)


def test_editor_is_prefilled_with_the_target_and_the_entry_in_place(client_as, seeded) -> None:
    client = client_as("curator")
    key = seeded["ops1"]
    r = client.get(promote_url([key], kind="memory", scope="ops-bot"))
    html = r.content.decode()
    assert r.status_code == 200 and "<html" in html  # a full page without htmx
    text = editor_fields(html)["text"]
    # A list item after the list, dated and linked back to the entry (MEMORYUI_PROVENANCE).
    mark = f"([{D1}, ops-bot](daily/{D1}.md#e-{key.split('#')[1]}))"
    assert text == MEMORY + f"- Canary at 5% caught the bad build. {mark}\n"
    assert version_of(MEMORY) in html
    # The heading chooser lists the target's headings; choosing one re-renders the draft.
    assert ">under ## Facts<" in html and ">under ## Lessons<" in html
    r = client.get(promote_url([key], kind="memory", scope="ops-bot", place="1",
                               slot="entry-abc"), HTTP_HX_REQUEST="true")
    frag = r.content.decode()
    assert "<html" not in frag and 'id="editor-entry-abc"' in frag
    assert editor_fields(frag)["text"] == (
        "# ops-bot memory\n\n## Facts\n- I work for Initech.\n- Canary at 5% caught the bad "
        f"build. {mark}\n\n## Lessons\n- Check canaries.\n")
    # Live preview reuses the editor's /preview/ endpoint with the target path.
    assert 'hx-post="/preview/"' in frag
    assert 'name="path" value="agents/ops-bot/memory/MEMORY.md"' in frag


def test_promote_writes_one_commit_with_provenance_and_records_it(client_as, seeded,
                                                                  workspace) -> None:
    client = client_as("curator")
    key = seeded["ops1"]
    path = workspace.path_for(Kind.MEMORY, "ops-bot")
    head = workspace.head()
    page = client.get(promote_url([key], kind="memory", scope="ops-bot", place="2"))
    fields = editor_fields(page.content.decode())
    edited = fields["text"].replace("Canary at 5% caught", "A 5% canary catches")
    r = save(client, [key], text=edited, base=fields["base"], kind="memory", scope="ops-bot",
             next=queue_url())
    assert r.status_code == 302 and r["Location"] == queue_url()
    assert workspace.read(path) == edited
    commits = workspace.log(limit=5)
    assert commits[1].sha == head
    c = commits[0]
    assert [f.path for f in c.files] == [path]
    assert c.trailers["Promoted-From"] == [key]
    assert c.actor == "user:curator" and c.tools == ["promote"]
    assert c.subject == f"Promote 1 entry from ops-bot into {path}"
    promo = Promotion.objects.get()
    assert (promo.target_path, promo.target_kind, promo.commit_sha, promo.created_by) == (
        path, "memory", c.sha, "curator")
    state = ReviewState.objects.get()
    assert (state.status, state.promotion, state.scope, state.date) == (
        "promoted", promo, "ops-bot", D1)
    # The entry left the queue; the promoted view shows where it went.
    todo = client.get(queue_url()).content.decode()
    assert "Canary at 5% caught" not in todo
    done = client.get(queue_url(status="promoted")).content.decode()
    assert f'href="/commit/{c.sha}/"' in done and f"/f/{path}" in done.replace("%2F", "/")
    assert "by curator" in done and "Undo promotion" in done


def test_promoting_headings_and_code_keeps_the_target_structure(client_as, seeded,
                                                               workspace) -> None:
    client = client_as("curator")
    path = workspace.path_for(Kind.MEMORY, "ops-bot")
    r, draft = promote_end_to_end(client, [seeded["ops2"]], kind="memory", scope="ops-bot",
                                  place="1")
    assert r.status_code == 302
    text = workspace.read(path)
    assert text == draft
    outline = [(h.level, h.text) for h in promote.headings(text)]
    assert outline == [(1, "ops-bot memory"), (2, "Facts"), (3, "Root cause"), (2, "Lessons")]
    assert "```sh\n## not a heading\n$ deployctl rollback api\n```" in text


def test_htmx_save_swaps_the_entry_out_of_band_with_where_it_went(client_as, seeded,
                                                                 workspace) -> None:
    from memoryui.review import dom_id

    client = client_as("curator")
    key = seeded["res1"]
    page = client.get(promote_url([key], kind="global", slot=dom_id(key)),
                      HTTP_HX_REQUEST="true")
    fields = editor_fields(page.content.decode())
    r = client.post("/review/promote/", {"entry": key, "kind": "global", "slot": dom_id(key),
                                         **fields}, HTTP_HX_REQUEST="true")
    html = r.content.decode()
    assert r.status_code == 200 and r["HX-Reswap"] == "none"
    assert f'id="{dom_id(key)}"' in html and 'hx-swap-oob="true"' in html
    assert "Promoted to" in html and "memory/MEMORY.md" in html
    sha = Promotion.objects.get().commit_sha
    assert f"/commit/{sha}/" in html and 'id="recent-promotions"' in html
    assert "Promoted 1 entry into memory/MEMORY.md" in html  # the flash, out of band
    assert workspace.read("memory/MEMORY.md") == (
        f"BM25 plus rerank beats dense-only. ([{D2}, research-agent](../agents/research-agent/"
        f"memory/daily/{D2}.md#e-{key.split('#')[1]}))\n")


def test_double_promotion_is_refused_with_a_clear_message(client_as, seeded,
                                                         workspace) -> None:
    client = client_as("curator")
    key = seeded["ops1"]
    r, _ = promote_end_to_end(client, [key], kind="memory", scope="ops-bot")
    assert r.status_code == 302
    head = workspace.head()
    again = client.get(promote_url([key], kind="global"))
    assert again.status_code == 409
    assert "already promoted to agents/ops-bot/memory/MEMORY.md" in again.content.decode()
    r = save(client, [key, seeded["ops3"]], text="# Shared\n\nx\n", base="absent",
             kind="global")
    assert r.status_code == 409
    assert "already promoted" in r.content.decode()
    assert workspace.head() == head and workspace.read("memory/MEMORY.md") is None
    assert ReviewState.objects.count() == 1  # the other entry was not half-promoted


def test_multi_select_into_a_new_skill_is_one_commit_with_a_trailer_per_entry(
        client_as, seeded, workspace) -> None:
    client = client_as("curator")
    keys = [seeded["ops1"], seeded["res1"]]
    desc = "Ship behind a canary. Use when deploying the api."
    r = client.get(promote_url(keys, kind="skill", name="canary-deploys", description=desc))
    html = r.content.decode()
    assert r.status_code == 200 and "new file" in html
    fields = editor_fields(html)
    assert fields["base"] == "absent"
    skill = skills.parse(fields["text"], "canary-deploys")
    assert skill.description == desc
    assert skill.body.index("Canary at 5%") < skill.body.index("BM25 plus")  # oldest first
    head = workspace.head()
    r = save(client, keys, text=fields["text"], base="absent", kind="skill",
             name="canary-deploys")
    assert r.status_code == 302
    new = workspace.log(limit=3)
    assert new[1].sha == head  # exactly one commit
    assert new[0].trailers["Promoted-From"] == [seeded["ops1"], seeded["res1"]]
    assert workspace.read("skills/canary-deploys/SKILL.md") == fields["text"]
    promo = Promotion.objects.get()
    assert promo.target_kind == "skill"
    assert sorted(s.entry_id for s in promo.entries.all()) == sorted(
        k.split("#")[1] for k in keys)


def test_skill_front_matter_errors_name_the_rule_and_write_nothing(client_as, seeded,
                                                                  workspace) -> None:
    client = client_as("curator")
    key = seeded["ops1"]
    head = workspace.head()
    text = "---\nname: other-name\ndescription: Does <things>\nmodel: opus\n---\n\n# X\n"
    r = save(client, [key], text=text, base="absent", kind="skill", name="my-skill")
    html = r.content.decode()
    assert r.status_code == 400
    assert "must equal the skill&#x27;s folder name" in html
    assert "must not contain &#x27;&lt;&#x27; or &#x27;&gt;&#x27;" in html
    assert "&#x27;model&#x27; not allowed" in html
    # The lead's text is kept in the editor to fix.
    assert "Does &lt;things&gt;" in html
    # An empty description (the new-skill draft without one) is refused by its rule too.
    page = client.get(promote_url([key], kind="skill", name="my-skill"))
    r = save(client, [key], text=editor_fields(page.content.decode())["text"], base="absent",
             kind="skill", name="my-skill")
    assert r.status_code == 400 and "description: required" in r.content.decode()
    # A bad skill name is refused in the editor itself, naming the rule.
    r = client.get(promote_url([key], kind="skill", name="Bad_Name"))
    assert r.status_code == 400
    assert "lowercase letters, digits and single hyphens" in r.content.decode()
    assert workspace.head() == head and not workspace.exists("skills/my-skill/SKILL.md")
    assert ReviewState.objects.count() == 0


def test_world_topic_new_name_is_sanitized_and_a_missing_name_is_asked_for(
        client_as, seeded, workspace) -> None:
    client = client_as("curator")
    key = seeded["sup1"]
    r = client.get(promote_url([key], kind="world", slot="bulk"), HTTP_HX_REQUEST="true")
    assert r.status_code == 200 and 'name="name"' in r.content.decode()
    assert "promote-save" not in r.content.decode()  # no editor until the topic is named
    r, text = promote_end_to_end(client, [key], kind="world", name="Customer Prefs")
    assert r.status_code == 302
    assert workspace.read("memory/world/customer-prefs.md") == text
    assert text.startswith("# Customer prefs\n\nGlobex prefers email")


def test_stale_target_gets_the_conflict_view_and_a_merge(client_as, seeded,
                                                         workspace) -> None:
    client = client_as("curator")
    key = seeded["ops1"]
    path = workspace.path_for(Kind.MEMORY, "ops-bot")
    page = client.get(promote_url([key], kind="memory", scope="ops-bot", place="2"))
    fields = editor_fields(page.content.decode())
    # Meanwhile the agent reflects: a new fact at the top.
    workspace.write(path, MEMORY.replace("- I work for Initech.", "- I work for Initech.\n"
                                         "- Deploys are on Tuesdays."),
                    actor=Actor.agent("ops-bot"), tool="reflect")
    before = workspace.read(path)
    r = save(client, [key], text=fields["text"], base=fields["base"], kind="memory",
             scope="ops-bot", place="2")
    html = r.content.decode()
    assert r.status_code == 409
    assert "changed since you opened the editor" in html and "Nothing was saved" in html
    assert "merged with their change automatically" in html
    # the shared conflict component: both changes from the base, and the three texts
    assert "<summary>The version you started from → the current file</summary>" in html
    assert all(f'id="conflict-{role}"' in html for role in ("base", "ours", "theirs"))
    assert workspace.read(path) == before and ReviewState.objects.count() == 0
    merged = editor_fields(html)
    assert "Deploys are on Tuesdays" in merged["text"] and "Canary at 5%" in merged["text"]
    assert merged["base"] == version_of(before)
    r = save(client, [key], text=merged["text"], base=merged["base"], kind="memory",
             scope="ops-bot")
    assert r.status_code == 302 and workspace.read(path) == merged["text"]


def test_budget_warning_before_saving_a_promotion_that_crosses_it(client_as, seeded,
                                                                  workspace) -> None:
    client = client_as("curator")
    key = seeded["ops2"]
    path = workspace.path_for(Kind.MEMORY, "ops-bot")
    big = MEMORY + "".join(f"- fact {i:04d} " + "x" * 80 + "\n" for i in range(106))
    assert len(big.encode()) < 10_000 < len(big.encode()) + 150
    workspace.write(path, big, actor=Actor.agent("ops-bot"), tool="reflect")
    page = client.get(promote_url([key], kind="memory", scope="ops-bot"))
    html = page.content.decode()
    assert "This promotion crosses the budget" in html and 'name="over_budget_ok"' in html
    fields = editor_fields(html)
    r = save(client, [key], text=fields["text"], base=fields["base"], kind="memory",
             scope="ops-bot")
    assert r.status_code == 400 and "over its budget" in r.content.decode()
    assert workspace.read(path) == big
    r = save(client, [key], text=fields["text"], base=fields["base"], kind="memory",
             scope="ops-bot", over_budget_ok="1")
    assert r.status_code == 302 and workspace.read(path) == fields["text"]


def test_bad_promote_input_is_a_clear_4xx(client_as, seeded, workspace) -> None:
    client = client_as("curator")
    key = seeded["ops1"]
    assert client.get("/review/promote/").status_code == 400
    assert client.get(promote_url([key], kind="directive")).status_code == 400
    assert client.get(promote_url([key], kind="nope")).status_code == 400
    assert client.get(promote_url([key], kind="memory", scope="../x")).status_code == 400
    assert client.get(promote_url([key], place="x")).status_code == 400
    assert client.get(promote_url(["memory/MEMORY.md#abc"])).status_code == 400
    assert client.get(promote_url(["/etc/passwd#abc"])).status_code == 400
    r = save(client, [key], text="", base="absent", kind="global")
    assert r.status_code == 400 and "empty" in r.content.decode()
    r = save(client, [key], text="x\n", base="", kind="global")
    assert r.status_code == 400 and "base version is missing" in r.content.decode()
    r = save(client, [key], text="x\n", base="absent", kind="global",
             next="https://evil.example/")
    assert r.status_code == 302 and r["Location"] == "/review/"
    assert ReviewState.objects.count() == 1


def test_zerostack_layout_promotes_to_global_not_to_a_scope_memory(client_as, settings,
                                                                   tmp_path) -> None:
    from memoryui.workspace import get_store, reset_store

    settings.MEMORYUI_WORKSPACE = tmp_path / "zs"
    settings.MEMORYUI_LAYOUT = "zerostack"
    reset_store()
    try:
        store = get_store()
        path = store.path_for(Kind.DAILY, "proj-1a2b3c4d", D2)
        store.append(path, "\n### 14:05 — compaction summary\nGoal: ship.\n",
                     actor=Actor.agent("proj-1a2b3c4d"), tool="memory_write")
        client = client_as("curator")
        html = client.get(queue_url()).content.decode()
        assert "Promote to global memory" in html and "compaction summary" in html
        key = f"{path}#{parse_daily(store.read(path))[0].id}"
        assert client.get(promote_url([key], kind="memory", scope="proj-1a2b3c4d")
                          ).status_code == 400
        r, text = promote_end_to_end(client, [key], kind="global")
        assert r.status_code == 302
        assert store.read("MEMORY.md") == (
            f"compaction summary ([{D2}, proj-1a2b3c4d](projects/proj-1a2b3c4d/daily/{D2}.md"
            f"#e-{key.split('#')[1]}))\n\nGoal: ship.\n") == text
    finally:
        reset_store()
