"""Expand context between hunks and the rendered (prose) diff of markdown.

A real git workspace written through the store, read with the Django test client.
"""

from __future__ import annotations

import html as htmllib
import re
from dataclasses import dataclass
from urllib.parse import quote

import pytest

from memoryui.store import Actor, Store
from memoryui.store.prosediff import blocks, prose_diff
from memoryui.web.diffsource import marks_to_tags, prose_html

OPS, ALICE = Actor.agent("ops-bot"), Actor.user("alice")
LONG = "agents/ops-bot/memory/notes.md"
PROSE = "agents/ops-bot/memory/MEMORY.md"
ANCHOR = "diff-agents-ops-bot-memory-notes-md"

OLD_LINES = [f"line {n}" for n in range(1, 61)]
# line 10 changes and a line is inserted after it; line 50 changes: two hunks, and below
# the first hunk every new line number is the old one plus one
NEW_LINES = OLD_LINES[:9] + ["line 10 changed", "inserted"] + OLD_LINES[10:49] \
    + ["line 50 changed"] + OLD_LINES[50:]

PROSE_OLD = ("# Runbook\n\nFirst paragraph about deploys.\n\n- item one\n- item two\n\n"
             "Obsolete: call Bob at night.\n")
PROSE_NEW = ("# Runbook\n\nFirst paragraph about canary deploys.\n\n- item one\n- item two\n\n"
             "## Escalation\n\nPage the on-call engineer.\n")


@dataclass
class Seeded:
    store: Store
    v1: str
    v2: str
    p1: str
    p2: str


@pytest.fixture
def seeded(workspace) -> Seeded:
    v1 = workspace.write(LONG, "\n".join(OLD_LINES) + "\n", actor=OPS, tool="reflect").commit
    v2 = workspace.write(LONG, "\n".join(NEW_LINES) + "\n", actor=ALICE, tool="edit").commit
    p1 = workspace.write(PROSE, PROSE_OLD, actor=OPS, tool="reflect").commit
    p2 = workspace.write(PROSE, PROSE_NEW, actor=ALICE, tool="edit").commit
    assert all((v1, v2, p1, p2))
    return Seeded(workspace, v1, v2, p1, p2)


def gaps(html: str) -> list[str]:
    """The "lines a–b" of every expand row, in page order."""
    return re.findall(r'<tr class="gap">.*?\(lines (\d+–\d+)\)</span></td></tr>', html, re.S)


def ctx_rows(html: str) -> list[tuple[int, int, str]]:
    """(old number, new number, text) of the unchanged rows drawn in a unified diff."""
    found = re.findall(r'<tr class="ctx[^"]*"><td class="ln" data-line="(\d+)"></td>'
                       r'<td class="ln" data-line="(\d+)"></td><td class="code">(.*?)</td>',
                       html)
    return [(int(o), int(n), htmllib.unescape(t)) for o, n, t in found]


def hx_links(html: str) -> dict[str, list[str]]:
    """htmx URLs of the expand links by direction (down/up/all)."""
    out: dict[str, list[str]] = {}
    for show, url in re.findall(r'class="gap-link gap-(\w+)" href="[^"]*" hx-get="([^"]*)"',
                                html):
        out.setdefault(show, []).append(htmllib.unescape(url))
    return out


def test_long_unchanged_regions_are_collapsed_into_expand_rows(client_as, seeded):
    r = client_as("viewer").get(f"/commit/{seeded.v2}/")
    assert r.status_code == 200
    html = r.content.decode()
    # 61 new lines; hunks show 7-14 and 48-54 (3 lines of context around each change)
    assert gaps(html) == ["1–6", "15–47", "55–61"]
    assert "line 30" not in html  # hidden, not merely styled away
    links = hx_links(html)
    assert len(links["all"]) == 3
    # only the 33 hidden lines between the hunks are worth a ↓ and a ↑ of 20 lines
    assert len(links["down"]) == 1 and len(links["up"]) == 1
    assert 'hx-target="closest tr"' in html


def test_expand_down_up_and_all_return_exactly_the_hidden_lines(client_as, seeded):
    c = client_as("viewer")
    links = hx_links(c.get(f"/commit/{seeded.v2}/").content.decode())
    middle_down = next(u for u in links["down"] if "start=15" in u)
    r = c.get(middle_down, HTTP_HX_REQUEST="true",
              HTTP_HX_CURRENT_URL=f"http://testserver/commit/{seeded.v2}/")
    assert r.status_code == 200 and "HX-Request" in r["Vary"]
    html = r.content.decode()
    assert "<html" not in html
    # new lines 15..34 are old lines 14..33, the text of old line n is "line n"
    assert ctx_rows(html) == [(n - 1, n, f"line {n - 1}") for n in range(15, 35)]
    assert gaps(html) == ["35–47"]  # what is still hidden, as a new expand row
    # its no-JS link reloads the page it is on with that region shown
    assert f'href="/commit/{seeded.v2}/?expand={ANCHOR}%3A35-47#{ANCHOR}"' in html

    middle_up = next(u for u in links["up"] if "start=15" in u)
    html = c.get(middle_up, HTTP_HX_REQUEST="true").content.decode()
    assert ctx_rows(html) == [(n - 1, n, f"line {n - 1}") for n in range(28, 48)]
    assert gaps(html) == ["15–27"]

    top_all = next(u for u in links["all"] if "start=1&" in u)
    html = c.get(top_all, HTTP_HX_REQUEST="true").content.decode()
    assert ctx_rows(html) == [(n, n, f"line {n}") for n in range(1, 7)]
    assert gaps(html) == []


def test_split_view_expands_with_numbers_on_both_sides(client_as, seeded):
    c = client_as("viewer")
    html = c.get(f"/commit/{seeded.v2}/?view=split").content.decode()
    assert gaps(html) == ["1–6", "15–47", "55–61"]
    bottom = next(u for u in hx_links(html)["all"] if "start=55" in u)
    assert "view=split" in bottom
    rows = c.get(bottom, HTTP_HX_REQUEST="true").content.decode()
    got = re.findall(r'<td class="ln" data-line="(\d+)"></td><td class="code ctx">(.*?)</td>'
                     r'<td class="ln" data-line="(\d+)"></td><td class="code ctx">(.*?)</td>',
                     rows)
    assert got == [(str(n - 1), f"line {n - 1}", str(n), f"line {n - 1}")
                   for n in range(55, 62)]


def test_without_javascript_the_link_reloads_the_page_expanded(client_as, seeded):
    c = client_as("viewer")
    html = c.get(f"/commit/{seeded.v2}/").content.decode()
    nojs = re.findall(r'class="gap-link gap-down" href="([^"]*)"', html)
    assert nojs and nojs[0].startswith(f"/commit/{seeded.v2}/?expand=")
    page = c.get(htmllib.unescape(nojs[0]).split("#")[0])
    assert page.status_code == 200
    html = page.content.decode()
    shown = [(o, n) for o, n, _ in ctx_rows(html)]
    assert all((n - 1, n) in shown for n in range(15, 35))
    assert gaps(html) == ["1–6", "35–47", "55–61"]
    everything = c.get(f"/commit/{seeded.v2}/?context=all").content.decode()
    assert gaps(everything) == []
    assert "line 30" in everything and (60, 61, "line 60") in ctx_rows(everything)
    # the context URL opened by itself is a page with the lines
    alone = c.get(hx_links(html)["all"][0])
    assert alone.status_code == 200 and b"<html" in alone.content and b"line 3" in alone.content


def test_inline_diff_of_a_history_row_links_to_its_commit_page(client_as, seeded):
    """"Compare with previous" swaps the commit's one-file diff into the history page:
    its links must not be relative to the history page."""
    r = client_as("viewer").get(f"/commit/{seeded.v2}/?path={quote(LONG)}",
                                HTTP_HX_REQUEST="true")
    html = r.content.decode()
    assert "<html" not in html and gaps(html) == ["1–6", "15–47", "55–61"]
    nojs = re.findall(r'class="gap-link gap-all" href="([^"]*)"', html)
    assert nojs[0].startswith(f"/commit/{seeded.v2}/?path=")


def test_compare_page_has_expand_rows(client_as, seeded):
    r = client_as("viewer").get(f"/compare/{LONG}?from={seeded.v1}&to={seeded.v2}")
    assert r.status_code == 200
    assert gaps(r.content.decode()) == ["1–6", "15–47", "55–61"]


def test_bad_expand_input_is_a_clear_400_and_unknown_things_404(client_as, seeded):
    c = client_as("viewer")
    base = f"/diff/context/{LONG}?rev={seeded.v2}&shift=0&pos=top&anchor=x&show=all"
    assert c.get(base + "&start=1&end=6").status_code == 200
    for bad, words in [("&start=9&end=3", b"start must not be after end"),
                       ("&start=1&end=62", b"has 61 lines"),
                       ("&start=0&end=3", b"start must be a line number"),
                       ("&start=a&end=3", b"start must be a line number")]:
        r = c.get(base + bad)
        assert r.status_code == 400 and words in r.content, bad
    assert c.get(base.replace("show=all", "show=sideways") + "&start=1&end=3").status_code == 400
    assert c.get(base.replace("shift=0", "shift=-5") + "&start=1&end=3").status_code == 400
    assert c.get(f"/diff/context/../etc/passwd?rev={seeded.v2}&start=1&end=1&shift=0"
                 "&pos=top&anchor=x&show=all").status_code in (400, 404)
    assert c.get(f"/diff/context/{LONG}?rev={'0' * 40}&start=1&end=1&shift=0&pos=top"
                 "&anchor=x&show=all").status_code == 404
    missing = c.get(f"/diff/context/agents/nobody.md?rev={seeded.v2}&start=1&end=1&shift=0"
                    "&pos=top&anchor=x&show=all")
    assert missing.status_code == 404
    assert c.get(f"/commit/{seeded.v2}/?expand=nonsense").status_code == 400
    assert c.get(f"/commit/{seeded.v2}/?expand={ANCHOR}:9-3").status_code == 400
    assert c.get(f"/commit/{seeded.v2}/?context=most").status_code == 400


def test_expand_needs_a_signed_in_reader(client, seeded):
    r = client.get(f"/diff/context/{LONG}?rev={seeded.v2}&start=1&end=6&shift=0&pos=top"
                   "&anchor=x&show=all")
    assert r.status_code in (302, 403) and b"line 3" not in r.content


def test_rendered_view_marks_insertions_and_deletions_and_is_remembered(client_as, seeded):
    c = client_as("viewer")
    page = f"/commit/{seeded.p2}/"
    source = c.get(page).content.decode()
    assert 'class="prose-toggle"' in source and "prose-diff" not in source
    r = c.get("/diff/view?mode=rendered&next=" + quote(page + "#x"))
    assert r.status_code == 302 and r["Location"] == page + "#x"
    assert r.cookies["memoryui_diffview"].value == "rendered"
    html = c.get(page).content.decode()  # the cookie, not the URL, chose the view
    prose = html.split('class="prose-diff markdown"', 1)[1].split("</div>\n</div>", 1)[0]
    assert "<p>First paragraph about <ins>canary </ins>deploys.</p>" in prose
    assert '<del class="prose-block prose-del"><p>Obsolete: call Bob at night.</p></del>' \
        in prose
    assert '<ins class="prose-block prose-ins"><h2 id="md-escalation">Escalation</h2>' in prose
    assert "<h1" in prose and "<li>item one</li>" in prose  # unchanged blocks, rendered
    # the compare page reads the same cookie
    cmp = c.get(f"/compare/{PROSE}?from={seeded.p1}&to={seeded.p2}").content.decode()
    assert "prose-diff" in cmp
    back = c.get("/diff/view?mode=source&next=" + quote(page))
    assert back.cookies["memoryui_diffview"].value == "source"
    assert "prose-diff" not in c.get(page).content.decode()


def test_view_switch_refuses_bad_modes_and_foreign_redirects(client_as, seeded):
    c = client_as("viewer")
    assert c.get("/diff/view?mode=fancy&next=/").status_code == 400
    for nxt in ("//evil.example/x", "https://evil.example/", "javascript:alert(1)"):
        r = c.get("/diff/view?mode=rendered&next=" + quote(nxt))
        assert r.status_code == 302 and r["Location"] == "/"


def test_script_and_onerror_come_out_escaped_in_both_views(client_as, workspace):
    evil_old = "# Notes\n\nsafe line\n"
    evil_new = ("# Notes\n\nsafe line <script>alert(1)</script>\n\n"
                "<img src=x onerror=alert(2)>\n\n[x](javascript:alert(3))\n")
    workspace.write(PROSE, evil_old, actor=OPS, tool="reflect")
    sha = workspace.write(PROSE, evil_new, actor=OPS, tool="reflect").commit
    c = client_as("viewer")
    source = c.get(f"/commit/{sha}/").content.decode()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in source
    assert "<script>alert" not in source and "<img src=x" not in source
    c.get("/diff/view?mode=rendered&next=/")
    rendered = c.get(f"/commit/{sha}/").content.decode()
    prose = rendered.split('class="prose-diff markdown"', 1)[1]
    assert "<script>alert" not in prose and "onerror" not in prose.split("</main>")[0]
    assert "javascript:" not in prose.split("</main>")[0]


def test_prose_diff_blocks_keep_fences_whole_and_marks_cannot_be_forged():
    assert blocks("a\n\n```\nx\n\ny\n```\n\nb") == ["a", "```\nx\n\ny\n```", "b"]
    # a file holding the private-use marks gets no <ins> from them
    assert "<ins>" not in prose_html("p forged\n", "p \ue000forged\ue001\n")
    ops = [b.op for b in prose_diff("one\n\ntwo\n", "one\n\ntwo\n\nthree\n")]
    assert ops == ["equal", "ins"]
    # marks never straddle a tag: closed before it, reopened after
    assert marks_to_tags("<p>a \ue000b <em>c</em> d\ue001 e</p>") == \
        "<p>a <ins>b </ins><em><ins>c</ins></em><ins> d</ins> e</p>"


def test_rendered_view_marks_the_few_edited_words_of_a_58_line_paragraph(client_as, workspace):
    lines = [f"Line {n} of the deploy runbook keeps the agent's notes on rollouts." for n in
             range(1, 59)]
    edits = {4: "rollouts", 20: "notes", 37: "deploy", 55: "agent's"}
    new = [line.replace(edits[n], "Thursday") if n in edits else line
           for n, line in enumerate(lines, 1)]
    workspace.write(PROSE, "# Runbook\n\n" + "\n".join(lines) + "\n", actor=OPS, tool="reflect")
    sha = workspace.write(PROSE, "# Runbook\n\n" + "\n".join(new) + "\n", actor=ALICE,
                          tool="edit").commit
    c = client_as("viewer")
    c.get("/diff/view?mode=rendered&next=/")
    html = c.get(f"/commit/{sha}/").content.decode()
    prose = html.split('class="prose-diff markdown"', 1)[1].split("</main>", 1)[0]
    assert prose.count("<ins>Thursday</ins>") == 4
    assert re.findall(r"<del>(.*?)</del>", prose) == ["rollouts", "notes", "deploy", "agent's"]
    assert "prose-del" not in prose and "prose-ins" not in prose  # not struck whole
