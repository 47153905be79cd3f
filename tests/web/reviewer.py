"""What a reviewer's browser asks of the review pages, and what it reads in their HTML."""

from __future__ import annotations

import re
from urllib.parse import urlencode

from tests.web.reviewing import RANGE


def queue_url(**params: str) -> str:
    return "/review/?" + urlencode({**RANGE, **params})


def promote_url(keys: list[str], **params: str) -> str:
    return "/review/promote/?" + urlencode([("entry", k) for k in keys] + list(params.items()))


def editor_fields(html: str) -> dict[str, str]:
    """The hidden base and the textarea of the save form, as a browser would post them."""
    base = re.search(r'name="base" value="([^"]*)"', html).group(1)
    text = re.search(r'<textarea[^>]*name="text"[^>]*>(.*?)</textarea>', html, re.S).group(1)
    import html as html_mod
    return {"base": base, "text": html_mod.unescape(text)}


def save(client, keys: list[str], *, text: str, base: str, **fields: str):
    data = [("entry", k) for k in keys] + [("text", text), ("base", base)]
    data += list(fields.items())
    return client.post("/review/promote/", urlencode(data),
                       content_type="application/x-www-form-urlencoded")


def promote_end_to_end(client, keys: list[str], **params: str):
    """Open the editor, keep its draft, save it; returns (response, draft text)."""
    page = client.get(promote_url(keys, **params))
    assert page.status_code == 200, page.content.decode()[:2000]
    fields = editor_fields(page.content.decode())
    form = {k: v for k, v in params.items() if k != "slot"}
    return save(client, keys, text=fields["text"], base=fields["base"], **form), fields["text"]


def entry_ids(html: str) -> list[str]:
    return re.findall(r'<li class="queue-item is-\w+" id="(entry-[0-9a-f]{12})"', html)
