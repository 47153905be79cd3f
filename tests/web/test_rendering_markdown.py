"""The markdown memoryui.rendering supports: links, tables, task lists, front matter, its cache."""

from __future__ import annotations

import threading

from memoryui.rendering import render_markdown
from tests.web.inert import _tags, assert_inert


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
