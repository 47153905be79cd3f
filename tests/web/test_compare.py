"""Compare any two versions of a file, a scope or the whole workspace.

A real workspace written by several actors (the history tests' seed), read through the
Django test client.
"""

from __future__ import annotations

import re

import pytest

from tests.web.test_history import DAILY, MEM, WORLD, Seeded, seed


@pytest.fixture
def seeded(workspace) -> Seeded:
    return seed(workspace)


def diff_lines(html: str, kind: str) -> list[str]:
    """The text of the added or deleted lines drawn in a unified diff."""
    rows = re.findall(rf'<tr class="{kind}">.*?<td class="code">(.*?)</td></tr>', html)
    return [re.sub(r"</?(ins|del)>", "", r) for r in rows]


def test_file_compare_of_two_versions_shows_everything_between_them(client_as, seeded):
    s = seeded.shas
    r = client_as("viewer").get(f"/compare/{MEM}?from={s['mem1']}&to={s['mem3']}")
    assert r.status_code == 200
    assert r["Vary"] and "HX-Request" in r["Vary"]
    html = r.content.decode()
    # mem1 -> mem3 spans two commits: Tuesday became Thursday, the pager line was added
    assert diff_lines(html, "del") == ["- the deploy window is Tuesday"]
    assert diff_lines(html, "add") == ["- the deploy window is Thursday",
                                       "- pager rotation is weekly"]
    assert f'href="/commit/{s["mem1"]}/"' in html and f'href="/commit/{s["mem3"]}/"' in html
    assert "Fix the deploy day" in html  # the "to" commit's subject


def test_short_ids_swap_and_split_view(client_as, seeded):
    s = seeded.shas
    c = client_as("viewer")
    html = c.get(f"/compare/{MEM}?from={s['mem3'][:7]}&to={s['mem1'][:7]}").content.decode()
    assert diff_lines(html, "add") == ["- the deploy window is Tuesday"]
    assert f'href="?from={s["mem1"]}&amp;to={s["mem3"]}"' in html  # the swap link
    split = c.get(f"/compare/{MEM}?from={s['mem1']}&to={s['mem3']}&view=split")
    assert split.status_code == 200 and b"diff-split" in split.content


def test_htmx_gets_the_diff_fragment(client_as, seeded):
    s = seeded.shas
    r = client_as("viewer").get(f"/compare/{MEM}?from={s['mem1']}&to={s['mem2']}",
                                HTTP_HX_REQUEST="true")
    html = r.content.decode()
    assert r.status_code == 200 and "HX-Request" in r["Vary"]
    assert "<html" not in html and "pager rotation is weekly" in html


def test_ticked_rows_redirect_to_the_shareable_url(client_as, seeded):
    s = seeded.shas
    c = client_as("viewer")
    page = c.get(f"/history/{MEM}").content.decode()
    assert f'action="/compare/{MEM}"' in page
    for sha in (s["mem1"], s["mem2"], s["mem3"]):
        assert f'name="rev" value="{sha}" form="compare-form"' in page
    # the form sends the rows in page order, newest first
    r = c.get(f"/compare/{MEM}?rev={s['mem3']}&rev={s['mem1']}")
    assert r.status_code == 302
    assert r["Location"] == f"/compare/{MEM}?from={s['mem1']}&to={s['mem3']}"
    one = c.get(f"/compare/{MEM}?rev={s['mem3']}")
    assert one.status_code == 400 and b"tick exactly two versions" in one.content
    assert c.get(f"/compare/{MEM}?rev=a&rev=b&rev=c").status_code == 400


def test_bad_commit_ids_and_paths_are_refused_on_the_error_page(client_as, seeded):
    s = seeded.shas
    c = client_as("viewer")
    assert c.get(f"/compare/{MEM}?from={s['mem1']}").status_code == 400
    assert c.get(f"/compare/{MEM}?from=HEAD&to={s['mem1']}").status_code == 404
    assert c.get(f"/compare/{MEM}?from=abc&to={s['mem1']}").status_code == 404
    assert c.get(f"/compare/{MEM}?from={'0' * 40}&to={s['mem1']}").status_code == 404
    r = c.get(f"/compare/agents/../etc/passwd?from={s['mem1']}&to={s['mem3']}")
    assert r.status_code == 400
    gone = c.get(f"/compare/agents/ops-bot/memory/NOPE.md?from={s['mem1']}&to={s['mem3']}")
    assert gone.status_code == 404
    assert c.get(f"/compare/?from={s['mem1']}&to={s['mem3']}&scope=../x").status_code == 400
    assert c.get(f"/compare/?from={s['mem1']}&to={s['mem3']}&scope=nobody").status_code == 404


def test_workspace_compare_lists_every_file_changed_and_a_scope_only_its_own(client_as,
                                                                            seeded):
    s = seeded.shas
    c = client_as("viewer")
    html = c.get(f"/compare/?from={s['mem1']}&to={s['world']}").content.decode()
    assert "3</strong> files changed" in html
    for path in (MEM, DAILY, WORLD):
        assert f">{path}</a>" in html
    scoped = c.get(f"/compare/?from={s['mem1']}&to={s['world']}&scope=ops-bot",
                   HTTP_HX_REQUEST="true").content.decode()  # the diff alone, no sidebar
    assert "1</strong> file changed" in scoped
    assert MEM in scoped and DAILY not in scoped and WORLD not in scoped


def test_activity_ticks_two_commits_and_keeps_the_scope_filter(client_as, seeded):
    s = seeded.shas
    c = client_as("viewer")
    html = c.get("/activity/?scope=ops-bot").content.decode()
    assert 'action="/compare/"' in html
    assert 'name="scope" value="ops-bot" form="compare-form"' in html
    assert f'name="rev" value="{s["mem3"]}" form="compare-form"' in html
    r = c.get(f"/compare/?scope=ops-bot&rev={s['mem3']}&rev={s['mem1']}")
    assert r.status_code == 302
    assert r["Location"] == f"/compare/?from={s['mem1']}&to={s['mem3']}&scope=ops-bot"


def test_anonymous_people_are_sent_to_sign_in(client, seeded):
    s = seeded.shas
    r = client.get(f"/compare/{MEM}?from={s['mem1']}&to={s['mem3']}")
    assert r.status_code in (302, 403)


def test_file_history_by_author(client_as, seeded):
    s = seeded.shas
    c = client_as("curator")
    ids = lambda html: re.findall(r'id="c-([0-9a-f]{40})"', html)  # noqa: E731
    ops = c.get(f"/history/{MEM}?actor=agent:ops-bot").content.decode()
    assert ids(ops) == [s["mem2"], s["mem1"]]
    assert 'value="agent:ops-bot"' in ops
    alice = c.get(f"/history/{MEM}?actor=user:alice").content.decode()
    assert ids(alice) == [s["mem3"]]
    nobody = c.get(f"/history/{MEM}?actor=agent:billing-agent")
    assert nobody.status_code == 200 and "No commits match these filters" in nobody.content.decode()
    bad = c.get(f"/history/{MEM}?actor=agent:../x")
    assert bad.status_code == 400 and b"invalid agent" in bad.content


def test_only_agent_writes_or_only_people_on_file_history_and_activity(client_as, seeded):
    s = seeded.shas
    c = client_as("viewer")
    ids = lambda html: re.findall(r'id="c-([0-9a-f]{40})"', html)  # noqa: E731
    assert ids(c.get(f"/history/{MEM}?who=agents").content.decode()) == [s["mem2"], s["mem1"]]
    assert ids(c.get(f"/history/{MEM}?who=people").content.decode()) == [s["mem3"]]
    assert c.get(f"/history/{MEM}?who=robots").status_code == 400
    agents = c.get("/activity/?who=agents").content.decode()
    assert ids(agents) == [s["mem2"], s["daily"], s["mem1"]]
    assert '<option value="agents" selected>' in agents
    people = c.get("/activity/?who=people&scope=ops-bot").content.decode()
    assert ids(people) == [s["mem3"]]
    bad = c.get("/activity/?who=robots")
    assert bad.status_code == 400 and b"choose agents or people" in bad.content
