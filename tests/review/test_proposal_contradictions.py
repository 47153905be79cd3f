"""Contradiction candidates of proposed changes (memoryui.review.contradictions), on a real
Store with the real embedding model and the ORM verdicts."""

from __future__ import annotations

import pytest

from memoryui.review import contradictions, cues, meaning
from memoryui.review.errors import ReviewError
from memoryui.search.embeddings import embedder
from memoryui.store import Actor, Kind, Store

REFUNDS_OLD = "Refunds are allowed for purchases under 30 days."
REFUNDS_NEW = "Refunds only under 14 days since the policy change."
POLICY = (f"# Billing policies\n\n- {REFUNDS_OLD}\n- Invoices are sent on the first of the "
          "month.\n")
MEMORY = "# triage-agent memory\n\n- The CI pipeline caches node_modules between runs.\n"

pytestmark = pytest.mark.skipif(embedder() is None, reason="the embedding model is missing")


@pytest.fixture
def verdicts(db):
    from memoryui.review.state import VERDICTS

    return VERDICTS


@pytest.fixture
def world(store: Store) -> str:
    meaning.clear_caches()
    path = store.path_for(Kind.WORLD, None, "billing")
    store.write(path, POLICY, actor=Actor.user("alice"), tool="edit")
    return path


def _memory(store: Store) -> tuple[str, str]:
    path = store.path_for(Kind.MEMORY, "triage-agent")
    store.write(path, MEMORY, actor=Actor.agent("triage-agent"), tool="reflect")
    return path, MEMORY


def test_an_added_line_that_contradicts_another_file_is_a_candidate(store, verdicts, world):
    path, current = _memory(store)
    proposed = current + f"- {REFUNDS_NEW}\n"
    (found,) = contradictions.for_proposals(store, verdicts, [(path, current, proposed)])
    assert [c.match.passage.text for c in found] == [f"- {REFUNDS_OLD}"]
    c = found[0]
    assert c.match.passage.path == world and c.match.passage.start == 3
    assert c.text == f"- {REFUNDS_NEW}" and (c.start, c.end) == (4, 4)
    assert c.match.differences == (cues.NUMBER,)
    ((index, k),) = contradictions.against_file(store, verdicts, world,
                                                [(path, current, proposed)])
    assert index == 0 and k.text == c.text
    assert contradictions.against_file(store, verdicts, path, [(path, current, proposed)]) == []


def test_a_line_the_proposal_replaces_in_its_own_file_is_not_flagged(store, verdicts, world):
    current = store.read(world)
    proposed = current.replace(REFUNDS_OLD, "Refunds are allowed for purchases under 14 days.")
    assert contradictions.for_proposals(store, verdicts, [(world, current, proposed)]) == [[]]


def test_a_kept_line_of_its_own_file_is_compared(store, verdicts, world):
    current = store.read(world)
    proposed = current + f"- {REFUNDS_NEW}\n"
    (found,) = contradictions.for_proposals(store, verdicts, [(world, current, proposed)])
    assert [(c.match.passage.path, c.match.passage.start) for c in found] == [(world, 3)]


def test_keep_both_and_dismiss_are_remembered_for_the_same_statement(store, verdicts, world):
    path, current = _memory(store)
    proposed = current + f"- {REFUNDS_NEW}\n"
    (c,) = contradictions.for_proposals(store, verdicts, [(path, current, proposed)])[0]
    contradictions.decide_proposal(store, verdicts, user="lead", proposal=(path, current,
                                   proposed), statement=c.statement, path=world,
                                   digest=c.match.passage.digest, choice=contradictions.KEEP)
    assert contradictions.for_proposals(store, verdicts, [(path, current, proposed)]) == [[]]
    # the same statement proposed again later, among other lines, is not flagged again
    again = current + "- Deploys happen on Tuesdays.\n" + f"- {REFUNDS_NEW}\n"
    assert contradictions.for_proposals(store, verdicts, [(path, current, again)]) == [[]]
    # the old line reworded is a new pair
    store.write(world, POLICY.replace("allowed", "accepted"), actor=Actor.user("alice"),
                tool="edit")
    (found,) = contradictions.for_proposals(store, verdicts, [(path, current, proposed)])
    assert [c.match.passage.path for c in found] == [world]


def test_a_choice_about_what_the_proposal_does_not_say_is_refused(store, verdicts, world):
    path, current = _memory(store)
    proposed = current + f"- {REFUNDS_NEW}\n"
    (c,) = contradictions.for_proposals(store, verdicts, [(path, current, proposed)])[0]
    args = {"user": "lead", "proposal": (path, current, proposed), "path": world,
            "digest": c.match.passage.digest}
    with pytest.raises(ReviewError, match="does not add that statement"):
        contradictions.decide_proposal(store, verdicts, statement="proposed-0000000000000000",
                                       choice=contradictions.DISMISS, **args)
    with pytest.raises(ReviewError, match="keep or dismiss"):
        contradictions.decide_proposal(store, verdicts, statement=c.statement,
                                       choice=contradictions.REPLACE, **args)
    with pytest.raises(ReviewError, match="changed since"):
        contradictions.decide_proposal(store, verdicts, statement=c.statement,
                                       choice=contradictions.DISMISS,
                                       **{**args, "digest": "0" * 16})
    with pytest.raises(ReviewError):
        contradictions.decide_proposal(store, verdicts, statement=c.statement,
                                       choice=contradictions.DISMISS,
                                       **{**args, "path": "../../etc/passwd"})
