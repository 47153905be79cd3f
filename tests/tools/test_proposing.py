"""Each dialect's tools under the `propose` policy: the framework's own success text, the
agent reading back its proposed text (multi-step edits keep working), every other reader
seeing the approved file, and approval landing it with the agent's commits in history."""

from __future__ import annotations

import subprocess
from collections.abc import Callable

import pytest

from memoryui.store import Actor, Kind, Store
from memoryui.store.agentview import AgentStore
from memoryui.store.approving import merge
from memoryui.store.layout import jutul_workspace_hash, zerostack_project_slug
from memoryui.store.proposals import list_proposals
from memoryui.tools.duragent import MAX_CONTENT_BYTES
from memoryui.tools.registry import ToolContext, ToolError, call_tool
from tests.tools.conftest import disk, run

LEAD = Actor.user("lead")


def policy_of(store: Store, kinds: set[Kind], policy: str = "propose") -> Callable[[str], str]:
    """The rule proposing.py gives an AgentStore, for a fixed set of kinds."""
    def policy_for(path: str) -> str:
        addr = store.address_of(path)
        return policy if addr is not None and addr.kind in kinds else "write"
    return policy_for


def proposing(ctx: ToolContext, *kinds: Kind, policy: str = "propose") -> ToolContext:
    """The same agent, its store under the policy for `kinds`."""
    store = ctx.store
    assert isinstance(store, Store)
    return ToolContext(AgentStore(store, ctx.scope, policy_of(store, set(kinds), policy)),
                       ctx.scope, ctx.actor, ctx.can_write_world, ctx.can_write_global,
                       ctx.clock, ctx.trailers)


def approve_all(store: Store) -> list[str]:
    return [merge(store, p.id, approver=LEAD) for p in list_proposals(store)]


def log_of(store: Store) -> str:
    """The workspace branch's history, merged proposals' commits included."""
    return subprocess.run(["git", "-C", str(store.root), "log", "--format=%an %s"],
                          check=True, capture_output=True, text=True).stdout


# -- Duragent ---------------------------------------------------------------------------------

def test_duragent_reflect_and_update_world_propose(make_ctx):
    own = make_ctx("duragent", "ops-bot", world=True)
    other = make_ctx("duragent", "qa-bot", world=True)
    store = own.store
    mem = "agents/ops-bot/memory/MEMORY.md"
    store.write(mem, "# Me\n\n- likes tea\n", actor=LEAD, tool="edit")
    ctx = proposing(own, Kind.MEMORY, Kind.WORLD)
    assert run(ctx, "reflect", content="# Me\n\n- likes coffee\n") == f"Reflected. Updated {mem}"
    assert run(ctx, "update_world", topic="people", content="Alice leads ops") == \
        "Updated world knowledge at memory/world/people.md"
    # the agent sees its own text; the disk, the store and other agents the approved one
    assert run(ctx, "reflect") == "Current MEMORY.md:\n\n# Me\n\n- likes coffee\n"
    assert "Alice leads ops" in run(ctx, "recall") and "likes coffee" in run(ctx, "recall")
    assert disk(own, mem) == "# Me\n\n- likes tea\n"
    assert disk(own, "memory/world/people.md") is None
    assert "Alice leads ops" not in run(other, "recall")
    assert run(own, "reflect") == "Current MEMORY.md:\n\n# Me\n\n- likes tea\n"
    # daily logs stay direct
    assert run(ctx, "remember", content="saw a deploy").startswith("Remembered.")
    assert "saw a deploy" in (disk(own, "agents/ops-bot/memory/daily/2026-02-12.md") or "")
    assert len(list_proposals(store)) == 2
    approve_all(store)
    assert disk(own, mem) == "# Me\n\n- likes coffee\n"
    assert disk(own, "memory/world/people.md") == "Alice leads ops"
    assert "Alice leads ops" in run(other, "recall")
    history = log_of(store)
    assert "lead Approve proposal" in history and "ops-bot Propose reflect" in history


def test_duragent_budget_refusal_is_the_frameworks(make_ctx):
    ctx = proposing(make_ctx("duragent", "ops-bot"), Kind.MEMORY)
    with pytest.raises(ToolError) as direct:
        run(make_ctx("duragent", "ops-bot"), "reflect", content="x" * (MAX_CONTENT_BYTES + 1))
    with pytest.raises(ToolError) as proposed:
        run(ctx, "reflect", content="x" * (MAX_CONTENT_BYTES + 1))
    assert (proposed.value.message, proposed.value.status) == \
        (direct.value.message, direct.value.status)
    assert list_proposals(ctx.store.store) == []


def test_read_policy_refuses_the_write(make_ctx):
    ctx = proposing(make_ctx("duragent", "ops-bot", world=True), Kind.WORLD, policy="read")
    with pytest.raises(ToolError) as err:
        run(ctx, "update_world", topic="people", content="x")
    assert err.value.status == 403
    assert "read-only for this agent" in err.value.message
    assert disk(ctx, "memory/world/people.md") is None


# -- zerostack --------------------------------------------------------------------------------

def test_zerostack_memory_write_and_edit_propose(make_ctx):
    slug = zerostack_project_slug("/home/alice/projects/api")
    own = make_ctx("zerostack", slug, global_=True)
    store = own.store
    store.write("MEMORY.md", "- likes tea\n", actor=LEAD, tool="edit")
    ctx = proposing(own, Kind.GLOBAL, Kind.SCRATCHPAD)
    direct = make_ctx("zerostack", slug, global_=True)
    wrote = run(ctx, "memory_write", target="long_term", content="- uses vim")
    assert wrote.startswith("Wrote") and "MEMORY.md" in wrote
    # the second step edits what the first proposed
    assert run(ctx, "memory_edit", target="long_term", old_str="- uses vim",
               new_str="- uses helix") == "Edited MEMORY.md"
    assert run(ctx, "memory_read", source="long_term") == "- likes tea\n- uses helix\n"
    assert run(direct, "memory_read", source="long_term") == "- likes tea\n"
    assert disk(own, "MEMORY.md") == "- likes tea\n"
    [p] = list_proposals(store)
    assert len(p.commits) == 2
    approve_all(store)
    assert disk(own, "MEMORY.md") == "- likes tea\n- uses helix\n"


# -- jutul ------------------------------------------------------------------------------------

def test_jutul_index_and_note_are_proposed(make_ctx):
    scope = jutul_workspace_hash("/home/alice/reservoir")
    own = make_ctx("jutul", scope)
    store = own.store
    index = f"workspaces/{scope}/memory/MEMORY.md"
    ctx = proposing(own, Kind.MEMORY, Kind.NOTE)
    first = run(ctx, "remember", title="User role", content="The user is an engineer.")
    assert first == (f"remembered `User role` → workspaces/{scope}/memory/user-role.md "
                     "(kind=project)")
    run(ctx, "remember", title="Units", content="Prefers SI units.")
    assert disk(own, index) is None
    assert ctx.store.read(index) is not None
    own_index = ctx.store.read(index) or ""
    assert "`User role`" in own_index and "`Units`" in own_index  # the second saw the first
    assert store.read(index) is None
    approve_all(store)
    assert disk(own, index) == own_index
    assert disk(own, f"workspaces/{scope}/memory/units.md") is not None


# -- Claude's memory tool ------------------------------------------------------------------------

def test_claude_memory_tool_views_and_edits_its_proposal(make_ctx):
    own = make_ctx("duragent", "ops-bot")
    store = own.store
    mem = "agents/ops-bot/memory/MEMORY.md"
    store.write(mem, "# Me\n- likes tea\n", actor=LEAD, tool="edit")
    ctx = proposing(own, Kind.MEMORY, Kind.NOTE)

    def memory(**args: object) -> str:
        return call_tool(ctx, "memory", args)
    assert memory(command="str_replace", path="/memories/MEMORY.md", old_str="likes tea",
                   new_str="likes coffee").startswith("The memory file has been edited.")
    assert memory(command="insert", path="/memories/MEMORY.md", insert_line=2,
                  insert_text="- uses vim").startswith("The file /memories/MEMORY.md has been "
                                                       "edited")
    seen = memory(command="view", path="/memories/MEMORY.md")
    assert "likes coffee" in seen and "uses vim" in seen
    # a new file proposed is there for its agent only, and can be edited next
    assert memory(command="create", path="/memories/notes/deploys.md",
                  file_text="- friday freeze\n") == \
        "File created successfully at: /memories/notes/deploys.md"
    assert memory(command="str_replace", path="/memories/notes/deploys.md",
                  old_str="friday", new_str="Friday").startswith("The memory file has been")
    assert "Friday freeze" in memory(command="view", path="/memories/notes/deploys.md")
    assert not (store.root / "agents/ops-bot/memory/notes/deploys.md").exists()
    assert "likes tea" in call_tool(own, "memory", {"command": "view",
                                                    "path": "/memories/MEMORY.md"})
    approve_all(store)
    assert disk(own, mem) == "# Me\n- likes coffee\n- uses vim\n"
