"""In real Chromium: an agent's write with a secret is refused (nothing reaches the pages),
a person's save is flagged with the warning, the overview counts it, and one click removes
it from the current text."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

from playwright.sync_api import expect

from memoryui.store import Actor
from tests.browser.conftest import screenshot, watch_console
from tests.secrets.samples import AWS, GITHUB

MEM = "agents/ops-bot/memory/MEMORY.md"


def agent_call(base: str, token: str, body: dict) -> tuple[int, dict]:
    req = urllib.request.Request(f"{base}/api/v1/agents/ops-bot/tools/remember",
                                 data=json.dumps(body).encode(), method="POST",
                                 headers={"Authorization": f"Bearer {token}",
                                          "Content-Type": "application/json",
                                          "Connection": "close"})
    try:
        with urllib.request.urlopen(req, timeout=120) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def test_a_blocked_and_a_flagged_secret(live_workspace, page_for, make_token):
    base, store = live_workspace
    store.write(MEM, "# ops-bot\n\n- deploys on Tuesday\n", actor=Actor.agent("ops-bot"),
                tool="reflect")
    token = make_token("ops-bot")
    status, body = agent_call(base, token, {"content": f"Deployed. CI key {AWS}"})
    assert status == 422
    assert body["error"]["message"].startswith(
        "Refused: the text contains a secret (AWS Access Key) on line ")
    assert AWS not in json.dumps(body)

    page = page_for("curator", "alice")
    errors = watch_console(page)
    page.goto(base + "/")
    expect(page.locator("h1")).to_have_text("Overview")
    expect(page.locator(".secret-warning")).to_have_count(0)  # the blocked write left nothing

    page.goto(f"{base}/f/{MEM}")
    page.get_by_role("link", name="Edit", exact=True).click()
    page.wait_for_url(f"{base}/edit/{MEM}")
    page.locator("#editor-text").fill(f"# ops-bot\n\n- deploys on Tuesday\n- GitHub token {GITHUB}\n")
    page.get_by_role("button", name="Save").click()
    page.wait_for_url(f"{base}/f/{MEM}")
    expect(page.get_by_text(f"Saved, but {MEM} contains a secret (GitHub Token on line 4)")
           ).to_be_visible()
    box = page.locator(".secret-warning")
    expect(box).to_contain_text("This file contains a secret.")
    expect(box).to_contain_text("GitHub Token on line 4")
    expect(box).to_contain_text("rotate the secret")
    screenshot(page, "secret-flagged")

    page.goto(base + "/")
    expect(page.locator(".secret-warning")).to_contain_text("1 file contains secrets.")
    page.locator(".secret-warning").get_by_role("link", name=MEM).click()
    page.wait_for_url(f"{base}/f/{MEM}")
    page.get_by_role("button", name="Remove from current text").click()
    expect(page.get_by_text("Removed the secret from the current text")).to_be_visible()
    expect(page.locator(".secret-warning")).to_have_count(0)
    assert store.read(MEM).endswith("- GitHub token [REDACTED]\n")
    assert store.log(MEM, limit=1)[0].subject == f"Remove secret from {MEM}"
    assert errors == []
