"""Every date a page or the API reads from a request is bounded in one place
(memoryui/store/dates.py): a far date is a clear 400, never an overflow's 500."""

from __future__ import annotations

import pytest

from memoryui.store import Actor, Kind

FAR = ["0001-01-01", "9999-12-31"]


@pytest.fixture
def seeded(workspace):
    workspace.write(workspace.path_for(Kind.MEMORY, "ops-bot"), "# ops-bot\n",
                    actor=Actor.agent("ops-bot"), tool="reflect")
    return workspace


@pytest.mark.parametrize("day", FAR)
@pytest.mark.parametrize("url", [
    "/review/?until={day}", "/review/?from={day}", "/review/?to={day}",
    "/review/sees/ops-bot/?day={day}", "/review/sees/ops-bot/?since={day}",
    "/activity/?since={day}", "/activity/?until={day}", "/activity.atom?until={day}",
    "/search/?q=x&from={day}", "/search/?q=x&to={day}",
])
def test_a_far_date_in_a_page_is_a_400_that_says_so(client_as, seeded, url, day):
    resp = client_as("viewer").get(url.format(day=day))
    assert resp.status_code == 400
    assert f"{day} is out of range" in resp.content.decode()


@pytest.mark.parametrize("day", FAR)
@pytest.mark.parametrize("url", ["/api/v1/history?since={day}", "/api/v1/history?until={day}",
                                 "/api/v1/search?q=x&since={day}"])
def test_a_far_date_in_the_api_is_a_json_400(client, seeded, make_token, url, day):
    resp = client.get(url.format(day=day),
                      HTTP_AUTHORIZATION=f"Bearer {make_token(admin=True)}")
    assert resp.status_code == 400
    error = resp.json()["error"]
    assert error["code"] == "invalid_arguments" and f"{day} is out of range" in error["message"]
