"""memoryui.rendering's sanitizer: every XSS payload renders inert, and stays inert re-rendered.

Plain functions, no Django and no database, so this runs with ``-p no:django``.
The XSS payloads also live in tests/fixtures/xss.md for the browser tests.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memoryui.rendering import render_markdown
from tests.web.inert import assert_inert

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
