"""The OpenAPI document tells the truth: schemathesis, with every check, against a real server.

`memoryui serve` runs on 127.0.0.1 over a temporary workspace with an admin token, and
schemathesis generates requests from /api/v1/openapi.json (examples, coverage and fuzzing,
valid and invalid, a bounded number each, derandomized so a run is repeatable and nothing
is shrunk or stored): a request the document allows must not be refused with a 400, one it
forbids must be refused, and every answer's status, content type, headers and body must be
documented.

Two rules no JSON Schema can state are the document's prose: the search grammar of `q` (a
query the parser refuses is a 400 that says where) and `since` after `until`; for those
requests the documented 400 is the expected answer. Preconditions (412, 428) depend on the
file's current state, not on the request's shape, so they count as an accepted request.
The tool operations' bodies are the frameworks' own schemas, which models are given
byte-exact; a framework refuses some values its schema allows (an empty topic) with its
own text, which each tool operation documents as a 400.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

schemathesis = pytest.importorskip("schemathesis")

from hypothesis import Phase, settings  # noqa: E402
from schemathesis import Case  # noqa: E402
from schemathesis.config import SchemathesisConfig  # noqa: E402
from schemathesis.specs.openapi import checks  # noqa: E402

from memoryui.search import QueryError  # noqa: E402
from memoryui.search.query import parse_tree  # noqa: E402
from tests.api.realserver import RealServer  # noqa: E402

# One server for every case: xdist keeps the module on one worker.
pytestmark = pytest.mark.xdist_group("schemathesis")

ACCEPTED = ["2xx", "3xx", "401", "403", "404", "409", "412", "428", "429", "5xx"]
MAX_EXAMPLES = 8


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RealServer, str]]:
    # Throttling off: schemathesis sends bad tokens on purpose, hundreds of times, and a
    # throttled address answers 429 where each check expects 401 (tests/api/test_throttle.py
    # covers the throttle).
    srv = RealServer(tmp_path_factory.mktemp("schemathesis"), workers=1,
                     env={"MEMORYUI_LOGIN_FAILURES": "0"})
    srv.migrate()
    token = srv.token("--admin")
    srv.start()
    status, _ = srv.request("PUT", "/api/v1/files/world/runbook.md", b"# Runbook\n",
                            {"Authorization": f"Bearer {token}",
                             "Content-Type": "text/markdown"})
    assert status == 201
    try:
        yield srv, token
    finally:
        srv.stop()


@pytest.fixture(scope="module")
def api_schema(server: tuple[RealServer, str]) -> object:
    srv, token = server
    config = SchemathesisConfig.from_dict({
        "checks": {"enabled": True,
                   "positive_data_acceptance": {"expected-statuses": ACCEPTED}},
        "generation": {"mode": "all", "max-examples": MAX_EXAMPLES, "deterministic": True,
                       "unique-inputs": True, "no-shrink": True, "database": "none"},
        "operations": [{
            # A framework's refusal of a value its own schema allows is a documented 400, and
            # where a framework is lenient beyond its schema (recall clamps `days`), so is
            # memoryui: both are the framework's contract, which the tool tests pin.
            "include-path-regex": "^/api/v1/agents/",
            "checks": {"positive_data_acceptance": {"expected-statuses": [*ACCEPTED, "400"]},
                       "negative_data_rejection": {"enabled": False}},
        }],
        # As configured auth, schemathesis knows the token is valid, and also checks that
        # the same request without it, or with a wrong one, is refused.
        "auth": {"openapi": {"bearer": {"bearer": token}}},
        "base-url": srv.base_url,
        "request-timeout": 60,
    })
    return schemathesis.openapi.from_url(f"{srv.base_url}/api/v1/openapi.json", config=config)


schema = schemathesis.pytest.from_fixture("api_schema")


def _readable_search(case: Case) -> bool:
    """A search the grammar reads, with `since` not after `until` (OpenAPI cannot say so)."""
    query = case.query or {}
    q = query.get("q")
    if isinstance(q, str) and q.strip():
        try:
            parse_tree(q)
        except QueryError:
            return False
    since, until = (str(query.get(k, "")).strip() for k in ("since", "until"))
    return not (since and until and since > until)


def _excluded(case: Case) -> list:
    """The checks a case's answer cannot be judged by, each with its reason."""
    excluded = []
    if case.operation.path == "/api/v1/search" and not _readable_search(case):
        # The grammar's refusal is the documented 400; every other check still runs.
        excluded.append(checks.positive_data_acceptance)
    if (case.media_type or "").startswith("text/") and not isinstance(case.body, str):
        # A raw text body is text whatever JSON type it was generated as (a number's digits).
        excluded.append(checks.negative_data_rejection)
    if case.operation.method.upper() == "DELETE" and case.operation.path == "/api/v1/files/{path}":
        # A missing If-Match is answered 428 Precondition Required (RFC 6585), the status
        # HTTP has for it, which this check does not count among refusals.
        excluded.append(checks.missing_required_header)
    if case.operation.path == "/api/v1/settings/agent/memory/dags/{dagName}":
        # Dagu answers a DAG without memory (a deleted one too) with 200 and '' content.
        excluded.append(checks.use_after_free)
    return excluded


@schema.parametrize()
@settings(database=None, derandomize=True, phases=[Phase.explicit, Phase.generate],
          deadline=None)
def test_the_api_answers_as_its_openapi_document_says(case: Case) -> None:
    case.call_and_validate(excluded_checks=_excluded(case))


def test_sequences_of_calls_answer_as_documented(api_schema: object) -> None:
    """Stateful: calls chained by the links schemathesis infers (write, read, delete, read)."""

    class Calls(api_schema.as_state_machine()):  # type: ignore[misc, name-defined]
        def validate_response(self, response: object, case: Case,
                              additional_checks: list | None = None, **kwargs: object) -> None:
            case.validate_response(response, additional_checks=additional_checks,
                                   excluded_checks=_excluded(case),
                                   transport_kwargs=kwargs or None, recorder=self.recorder)

    Calls.run(settings=settings(max_examples=MAX_EXAMPLES, stateful_step_count=6,
                                database=None, derandomize=True, deadline=None,
                                phases=[Phase.generate]))


def test_the_document_is_served_to_schemathesis(api_schema: object) -> None:
    """Every operation is loaded (a broken reference or pattern would drop one)."""
    labels = {op.ok().label for op in api_schema.get_all_operations()}
    assert "POST /mcp" in labels and "PUT /api/v1/files/{path}" in labels
    assert any(label.startswith("POST /api/v1/agents/") for label in labels)
