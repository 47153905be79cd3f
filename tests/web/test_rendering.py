"""memoryui.rendering: markdown features and the sanitizer's XSS guarantees.

Plain functions, no Django and no database, so this runs with ``-p no:django``.
The XSS payloads also live in tests/fixtures/xss.md for the browser tests.
"""

from __future__ import annotations

import re
import threading
from html.parser import HTMLParser
from pathlib import Path

import pytest

from memoryui.rendering import ALLOWED_TAGS, render_markdown

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "xss.md"

# (name, markdown) -- every one must render inert.
PAYLOADS: list[tuple[str, str]] = [
    ("script-tag", "<script>alert(1)</script>"),
    ("script-src", "<SCRIPT SRC=//evil.example/x.js></SCRIPT>"),
    ("script-nested", "<scr<script>ipt>alert(1)</scr</script>ipt>"),
    ("script-inline", "text <script>alert(1)</script> more"),
    ("img-onerror", "<img src=x onerror=alert(1)>"),
    ("img-onerror-case", '<img src="x" OnErRoR="alert(1)">'),
    ("img-onerror-slash", "<img/src=x/onerror=alert(1)>"),
    ("img-src-js", '<img src="javascript:alert(1)">'),
    ("a-href-js", '<a href="javascript:alert(1)">js</a>'),
    ("a-href-js-case", '<a href="jAvAsCrIpT:alert(1)">case</a>'),
    (
        "a-href-dec-entities",
        '<a href="&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;alert(1)">dec</a>',
    ),
    ("a-href-hex-entities", '<a href="&#x6A;avascript&#x3A;alert(1)">hex</a>'),
    ("a-href-named-colon", '<a href="javascript&colon;alert(1)">colon</a>'),
    ("a-href-newline", '<a href="java\nscript:alert(1)">newline</a>'),
    ("a-href-tab-entity", '<a href="java&#x09;script:alert(1)">tab</a>'),
    ("a-href-ctrl-prefix", '<a href=" &#14; javascript:alert(1)">ctrl</a>'),
    ("a-href-vbscript", '<a href="vbscript:msgbox(1)">vb</a>'),
    (
        "a-href-data-html",
        '<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">d</a>',
    ),
    ("a-onmouseover", '<a href="https://ok.example" onmouseover="alert(1)">hover</a>'),
    ("md-link-js", "[x](javascript:alert(1))"),
    ("md-link-js-case", "[x](JaVaScRiPt:alert(1))"),
    ("md-link-js-entity", "[x](&#106;avascript:alert(1))"),
    ("md-link-js-spaces", "[x]( javascript:alert(1) )"),
    ("md-link-vbscript", "[x](vbscript:msgbox(1))"),
    ("md-link-data", "[x](data:text/html,<script>alert(1)</script>)"),
    ("md-ref-link-js", "[x][evil]\n\n[evil]: javascript:alert(1)"),
    ("md-autolink-js", "<javascript:alert(1)>"),
    ("md-image-js", "![x](javascript:alert(1))"),
    ("md-image-data-svg", "![x](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+)"),
    ("md-title-dquote", '[x](https://ok.example "a\\" onmouseover=\\"alert(1)")'),
    ("md-title-squote", "[x](https://ok.example 'a\" onmouseover=\"alert(1)')"),
    ("md-image-title", '![x](https://ok.example/i.png "\\" onerror=\\"alert(1)")'),
    ("svg-onload", "<svg onload=alert(1)>"),
    ("svg-script", "<svg><script>alert(1)</script></svg>"),
    ("svg-xlink", '<svg><a xlink:href="javascript:alert(1)"><text y="20">x</text></a></svg>'),
    ("iframe-srcdoc", '<iframe srcdoc="<script>alert(1)</script>"></iframe>'),
    ("iframe-src-js", '<iframe src="javascript:alert(1)"></iframe>'),
    (
        "object-data",
        '<object data="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg=="></object>',
    ),
    ("embed-src", '<embed src="javascript:alert(1)">'),
    ("details-ontoggle", "<details open ontoggle=alert(1)><summary>t</summary>x</details>"),
    ("math-href", '<math href="javascript:alert(1)">CLICK</math>'),
    (
        "math-mxss",
        "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)></style></mtext></math>",
    ),
    (
        "style-expression",
        '<style>*{x:expression(alert(1))} body{background:url("javascript:alert(1)")}</style>',
    ),
    ("style-attr", '<div style="width: expression(alert(1))">x</div>'),
    ("form-action", '<form action="javascript:alert(1)"><button>go</button></form>'),
    ("button-formaction", '<button formaction="javascript:alert(1)">x</button>'),
    ("input-autofocus", "<input onfocus=alert(1) autofocus>"),
    ("body-onload", "<body onload=alert(1)>"),
    ("meta-refresh", '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">'),
    ("base-href", '<base href="javascript:alert(1)//">'),
    ("link-stylesheet", '<link rel="stylesheet" href="javascript:alert(1)">'),
    ("comment-breakout", "<!-- --!><img src=x onerror=alert(1)>-->"),
    ("noscript-mxss", '<noscript><p title="</noscript><img src=x onerror=alert(1)>">'),
    ("textarea-rcdata", "<textarea><img src=x onerror=alert(1)></textarea>"),
    ("template-script", "<template><script>alert(1)</script></template>"),
    ("video-source", "<video><source onerror=alert(1)></video>"),
    ("marquee-onstart", "<marquee onstart=alert(1)>x</marquee>"),
    ("unknown-tag-onclick", "<x onclick=alert(1)>unknown</x>"),
    ("unclosed-img", '<img src="x" onerror="alert(1)"'),
    ("unclosed-a", '<a href="javascript:alert(1)" x="'),
    ("entities-text", "&lt;script&gt;alert(1)&lt;/script&gt;"),
    ("htmx-attrs", '<div hx-get="/admin/" hx-trigger="load" hx-swap="outerHTML">htmx</div>'),
    ("app-hooks", '<a class="js-promote btn" data-confirm="x" href="#">hook</a>'),
    (
        "dom-clobber",
        '<h2 id="csrftoken">c</h2><img name="htmx" src="x"><form id="x" name="y"></form>',
    ),
    ("code-block", "```html\n<script>alert(1)</script>\n```"),
]

URL_ATTRS = {"href", "src", "action", "formaction", "xlink:href", "background", "poster", "data"}
SAFE_ATTRS = {
    "href", "title", "src", "alt", "id", "class", "align", "scope", "start", "open",
    "type", "checked", "disabled", "rel",
}  # fmt: skip


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, attrs))

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, attrs))


def _tags(out: str) -> list[tuple[str, list[tuple[str, str | None]]]]:
    parser = _Collector()
    parser.feed(out)
    parser.close()
    return parser.tags


def _normalize_url(value: str) -> str:
    """What a browser would see as the scheme: no whitespace/control chars, lower case."""
    return re.sub(r"[\x00-\x20\x7f-\xa0\s]+", "", value).lower()


def assert_inert(out: str) -> None:
    assert "<script" not in out.lower()
    # Text is escaped, so every "<" left in the output starts a real tag; attribute values
    # are always double-quoted with '"' escaped, so blanking them leaves only names.
    for tag_text in re.findall(r"<[^>]*>", out):
        names_only = re.sub(r'"[^"]*"', '""', tag_text)
        assert not re.search(r"\son\w+\s*=", names_only, re.I), tag_text
        assert "'" not in names_only, tag_text
    for tag, attrs in _tags(out):
        assert tag in ALLOWED_TAGS, tag
        for name, value in attrs:
            assert not name.startswith("on"), (tag, name)
            assert name in SAFE_ATTRS, (tag, name)
            if name in URL_ATTRS and value:
                url = _normalize_url(value)
                assert not url.startswith(("javascript:", "vbscript:", "data:")), (tag, value)
                scheme = re.match(r"([a-z][a-z0-9+.-]*):", url)
                assert scheme is None or scheme.group(1) in {"http", "https", "mailto"}, url
            if name == "class":
                assert "js-" not in (value or ""), value
            if name == "id":
                assert (value or "").startswith(("md-", "fn:", "fnref")), value
        if tag == "input":
            names = {n for n, _ in attrs}
            assert ("type", "checkbox") in attrs and "disabled" in names, attrs
        if tag == "a" and any(n == "href" for n, _ in attrs):
            assert ("rel", "nofollow noopener") in attrs, attrs


@pytest.mark.parametrize(("name", "payload"), PAYLOADS, ids=[n for n, _ in PAYLOADS])
def test_payload_is_inert(name: str, payload: str) -> None:
    out = render_markdown(payload)
    assert_inert(out)
    # Re-rendering the sanitized HTML must not change it into something active (mXSS).
    assert_inert(render_markdown(out))


def test_payload_count() -> None:
    assert len(PAYLOADS) >= 25


def test_fixture_holds_every_payload_and_renders_inert() -> None:
    text = FIXTURE.read_text(encoding="utf-8")
    for name, payload in PAYLOADS:
        assert payload in text, name
    assert_inert(render_markdown(text))


def test_script_body_stays_text_not_code() -> None:
    out = render_markdown("<script>alert(1)</script>")
    assert "<script" not in out
    assert "alert(1)" in out  # visible to the reviewer as plain text


def test_html_payloads_survive_as_text_in_code_blocks() -> None:
    out = render_markdown("```html\n<img src=x onerror=alert(1)>\n```")
    assert "&lt;img src=x onerror=alert(1)&gt;" in out
    assert '<code class="language-html">' in out


def test_good_links_and_images_are_kept() -> None:
    out = render_markdown(
        '[a](https://example.com/x?y=1 "T") [b](mailto:a@example.com) [c](notes/x.md) '
        '[d](#md-top) ![i](https://example.com/i.png "pic")'
    )
    tags = _tags(out)
    hrefs = [dict(a)["href"] for t, a in tags if t == "a"]
    assert hrefs == ["https://example.com/x?y=1", "mailto:a@example.com", "notes/x.md", "#md-top"]
    assert all(("rel", "nofollow noopener") in a for t, a in tags if t == "a")
    img = next(dict(a) for t, a in tags if t == "img")
    assert img == {"src": "https://example.com/i.png", "alt": "i", "title": "pic"}


def test_tables_with_alignment() -> None:
    out = render_markdown("| a | b | c |\n|:--|:-:|--:|\n| 1 | 2 | 3 |\n")
    assert "<table>" in out and "<thead>" in out and "<tbody>" in out
    assert '<th align="left">a</th>' in out
    assert '<td align="center">2</td>' in out
    assert '<td align="right">3</td>' in out
    assert "style=" not in out


def test_fenced_code_keeps_language_class_and_escapes() -> None:
    out = render_markdown('```python\nif a < b:\n    print("x")\n```\n')
    assert '<pre><code class="language-python">' in out
    assert "if a &lt; b:" in out


def test_inline_code_and_emphasis() -> None:
    out = render_markdown("Use `git log` and **bold** and *em*.")
    assert "<code>git log</code>" in out
    assert "<strong>bold</strong>" in out and "<em>em</em>" in out


def test_task_lists_become_disabled_checkboxes() -> None:
    out = render_markdown("- [ ] open item\n- [x] done item\n- [X] also done\n- plain\n")
    tags = _tags(out)
    boxes = [dict(a) for t, a in tags if t == "input"]
    assert len(boxes) == 3
    assert all(b.get("type") == "checkbox" and "disabled" in b for b in boxes)
    assert ["checked" in b for b in boxes] == [False, True, True]
    assert '<ul class="contains-task-list">' in out
    assert out.count('<li class="task-list-item">') == 3
    assert "<li>plain</li>" in out
    assert "[ ]" not in out and "[x]" not in out


def test_task_lists_loose_and_star_bullets() -> None:
    out = render_markdown("* [ ] one\n\n* [x] two\n")
    assert out.count("<input") == 2
    assert "<p><input" in out


def test_brackets_elsewhere_are_not_tasks() -> None:
    out = render_markdown("[ ] not a list\n\n- [link](https://a.example)\n- [y] no\n")
    assert "<input" not in out


def test_raw_input_is_forced_to_disabled_checkbox() -> None:
    out = render_markdown('<input type="text" value="x" name="q">')
    (tag, attrs), *_ = [t for t in _tags(out) if t[0] == "input"]
    assert dict(attrs) == {"type": "checkbox", "disabled": ""}


def test_headings_get_prefixed_unique_ids() -> None:
    out = render_markdown("# Hello World\n\n## Hello World\n\n### Ünïcode Tïtle\n")
    assert '<h1 id="md-hello-world">Hello World</h1>' in out
    assert '<h2 id="md-hello-world_1">Hello World</h2>' in out
    assert 'id="md-ünïcode-tïtle"' in out


def test_raw_html_ids_and_classes_are_dropped() -> None:
    out = render_markdown(
        '<h2 id="messages" class="flash error">x</h2>\n\n<div class="btn">y</div>'
    )
    assert "id=" not in out and "class=" not in out


def test_attr_list_is_not_enabled() -> None:
    out = render_markdown("# Title {: onclick=alert(1) #main .btn }\n\npara\n{: hx-get=/x }")
    assert_inert(out)
    attrs = [a for _, attrs in _tags(out) for a in attrs]
    assert ("id", "main") not in attrs
    assert all(name in {"id"} for name, _ in attrs)  # only the toc heading id


def test_footnotes_and_definition_lists() -> None:
    out = render_markdown("Fact[^a].\n\n[^a]: Source.\n\nTerm\n: Meaning\n")
    assert '<sup id="fnref:a">' in out and '<li id="fn:a">' in out
    assert '<div class="footnote">' in out
    assert "<dl>" in out and "<dt>Term</dt>" in out and "<dd>Meaning</dd>" in out


def test_details_summary_allowed() -> None:
    out = render_markdown("<details open><summary>More</summary>hidden</details>")
    assert "<details open" in out and "<summary>More</summary>" in out


def test_front_matter_becomes_escaped_table() -> None:
    text = (
        "---\n"
        "name: pdf-tools\n"
        "description: |\n"
        "  Extract text & tables.\n"
        "  Use with <script>care</script>.\n"
        'version: "1.0"\n'
        "---\n"
        "# Body\n"
    )
    out = render_markdown(text)
    assert out.startswith('<table class="front-matter">')
    assert '<th scope="row">name</th><td>pdf-tools</td>' in out
    assert "Extract text &amp; tables.\nUse with &lt;script&gt;care&lt;/script&gt;." in out
    assert "<td>1.0</td>" in out
    assert '<h1 id="md-body">Body</h1>' in out
    assert "<hr" not in out and "<h2" not in out


def test_front_matter_jutul_note_with_lists() -> None:
    text = "---\ntitle: Deploys\nkind: fact\ntags:\n  - ops\n  - ci\n---\n\nBody text.\n"
    out = render_markdown(text)
    assert "<td>Deploys</td>" in out and "<td>fact</td>" in out
    assert "<td>- ops\n- ci</td>" in out
    assert "<p>Body text.</p>" in out


def test_front_matter_that_is_not_key_value_is_shown_raw() -> None:
    out = render_markdown("---\nname: x\n<img src=x onerror=alert(1)>\n---\nbody")
    assert out.startswith("<pre><code>")
    assert "&lt;img src=x onerror=alert(1)&gt;" in out
    assert_inert(out)


def test_horizontal_rule_prose_is_not_front_matter() -> None:
    out = render_markdown("---\nJust a rule then prose.\n---\n")
    assert "front-matter" not in out
    assert "<hr>" in out


def test_front_matter_only_at_top() -> None:
    out = render_markdown("Intro\n\n---\nkey: value\n---\n")
    assert "front-matter" not in out


def test_empty_and_crlf_input() -> None:
    assert render_markdown("") == ""
    out = render_markdown("\ufeff---\r\nname: x\r\n---\r\n# T\r\n")
    assert "<td>x</td>" in out and '<h1 id="md-t">T</h1>' in out


def test_state_does_not_leak_between_calls() -> None:
    first = render_markdown("# Same\n\nNote[^1]\n\n[^1]: one")
    second = render_markdown("# Same\n\nNote[^1]\n\n[^1]: one")
    assert first == second
    assert 'id="md-same"' in second and "md-same_1" not in second


def test_thread_safety() -> None:
    docs = [f"# Doc {i}\n\n- [x] item {i}\n\n| a |\n|---|\n| {i} |\n" for i in range(8)]
    expected = [render_markdown(d) for d in docs]
    errors: list[str] = []

    def work(i: int) -> None:
        for _ in range(25):
            if render_markdown(docs[i]) != expected[i]:
                errors.append(f"doc {i} differed")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_render_cache_is_bounded_and_never_serves_another_text(monkeypatch) -> None:
    """Rendered HTML is remembered by its source text: a changed text renders anew, the
    oldest entries go once the byte bound is reached, and huge texts are never kept."""
    from cachetools import LRUCache

    from memoryui import caches, rendering

    cache = caches.Shelf(LRUCache(maxsize=100, getsizeof=caches._text_and_html))
    monkeypatch.setattr(rendering, "RENDERED", cache)
    monkeypatch.setattr(rendering, "RENDERED_MAX_TEXT", 40)

    def put(text: str) -> None:
        cache.put(text, (text, "<p>" + text + "</p>"))

    put("a" * 20)  # 47 bytes
    put("b" * 20)  # 94 in all
    assert cache.get("a" * 20) == ("a" * 20, "<p>" + "a" * 20 + "</p>")  # now the newest
    put("c" * 20)  # over 100: the oldest ("b") goes
    assert cache.get("b" * 20) is None
    assert cache.get("a" * 20) and cache.get("c" * 20)
    render_markdown("d" * 41)
    assert cache.get("d" * 41) is None
    first = render_markdown("# Title\n\n- one\n")
    assert cache.get("# Title\n\n- one\n") == ("# Title\n\n- one\n", first)
    assert render_markdown("# Title\n\n- one\n") == first
    assert "two" in render_markdown("# Title\n\n- one\n- two\n")


def test_text_over_the_render_limit_gets_a_notice_not_its_html():
    """Every caller (review cards, conflict views, old versions) is covered here once."""
    huge = "# Huge\n\n" + "- a fact\n" * 130_000  # over the default 1 MiB
    html = render_markdown(huge)
    assert html.startswith('<p class="render-skipped">This text is too large to render here')
    assert "Huge" not in html and "a fact" not in html
    assert "<h1" in render_markdown(huge[:1000])
