"""The registry as agents see it: which tools each layout offers, their schemas and texts."""

from __future__ import annotations

import re

import pytest

from memoryui.tools.anthropic import SCHEMA as ANTHROPIC_SCHEMA
from memoryui.tools.registry import _REGISTRY, ToolError, _load, find_tool, tools_for
from tests.tools.conftest import run

DIALECT_TOOLS = {
    "duragent": {"recall", "remember", "reflect", "update_world", "memory"},
    "zerostack": {"memory_write", "memory_read", "memory_search", "memory_edit"},
    "jutul": {"remember"},
}
# Tools the frameworks' own prompts name but memoryui never offers.
FOREIGN = {"read_file", "write_file", "edit_file", "memory_forget", "patch"}


def all_tools():
    _load()
    return list(_REGISTRY)


def dialect_tools():
    return [t for t in all_tools() if t.dialect in DIALECT_TOOLS]


@pytest.mark.parametrize("layout", sorted(DIALECT_TOOLS))
def test_each_layout_offers_its_frameworks_tools(layout):
    offered = {t.name: t.dialect for t in tools_for(layout)}
    for name in DIALECT_TOOLS[layout]:
        assert offered[name] == layout
    others = set().union(*(v for k, v in DIALECT_TOOLS.items() if k != layout))
    assert not {n for n, d in offered.items() if d != "anthropic"} - DIALECT_TOOLS[layout]
    assert not (others - {"memory", "remember"}) & set(offered)


@pytest.mark.parametrize("t", dialect_tools(), ids=lambda t: f"{t.dialect}.{t.name}")
def test_schemas_are_closed_objects_with_described_fields(t):
    s = t.input_schema
    assert s["type"] == "object" and s["additionalProperties"] is False
    assert set(s["required"]) <= set(s["properties"])
    for name, prop in s["properties"].items():
        if (t.name, name) == ("memory", "view_range"):  # Claude's form, admitted by duragent
            assert prop == {**ANTHROPIC_SCHEMA["properties"]["view_range"]}
            continue
        assert prop["type"] in ("string", "integer"), name
        if (t.name, name) != ("memory_search", "query"):  # zerostack gives none
            assert prop["description"].strip(), name
    assert t.openai() == {"type": "function", "function": {
        "name": t.name, "description": t.description, "parameters": s}}


@pytest.mark.parametrize("layout", ["duragent", "zerostack", "jutul", "dagu"])
def test_descriptions_never_mention_a_tool_the_layout_lacks(layout):
    offered = {t.name for t in tools_for(layout)}
    missing = ({t.name for t in all_tools()} | FOREIGN) - offered
    for t in tools_for(layout):
        texts = [t.description] + [p.get("description", "")
                                   for p in t.input_schema["properties"].values()]
        for name in missing:
            word = (rf"\b{name}\b" if "_" in name
                    else rf"[`']{name}[`']|\b{name} tool\b|\btool {name}\b")
            for text in texts:
                assert not re.search(word, text), f"{t.dialect}.{t.name} mentions {name}"


def test_annotations_are_truthful():
    flags = {(t.dialect, t.name): (t.read_only, t.destructive) for t in dialect_tools()}
    read_only = {k for k, (ro, _d) in flags.items() if ro}
    assert read_only == {("duragent", "recall"), ("zerostack", "memory_read"),
                         ("zerostack", "memory_search")}
    destructive = {k for k, (_ro, d) in flags.items() if d}
    assert ("duragent", "remember") not in destructive  # append only
    assert {("duragent", "reflect"), ("duragent", "update_world"), ("duragent", "memory"),
            ("zerostack", "memory_write"), ("zerostack", "memory_edit"),
            ("jutul", "remember")} <= destructive


def test_memory_dispatches_on_action_or_command():
    assert find_tool("duragent", "memory", {"action": "recall"}).dialect == "duragent"
    assert find_tool("duragent", "memory", {}).dialect == "duragent"
    assert {t.name: t.dialect for t in tools_for("duragent")}["memory"] == "duragent"
    anthropic = find_tool("duragent", "memory", {"command": "view", "path": "/memories"})
    if anthropic is None or anthropic.dialect != "anthropic":
        pytest.skip("the Anthropic memory tool is not registered for the duragent layout")
    assert anthropic.dialect == "anthropic"


def test_argument_errors_reach_the_caller_as_400s(make_ctx):
    ctx = make_ctx("duragent", "ops-bot")

    def err(name, **args):
        with pytest.raises(ToolError) as info:
            run(ctx, name, **args)
        assert (info.value.code, info.value.status) == ("invalid_arguments", 400)
        return info.value.message

    assert err("memory", action="forget") == \
        "Unknown action: 'forget'. Use: recall, remember, reflect, update_world"
    assert err("memory", action=3) == "field 'action' must be of type string, got int"
    assert err("recall", days="3") == "field 'days' must be of type integer, got str"
    assert err("remember", content="x", path="../../etc") == \
        "unknown field(s): path; allowed: content"
    assert "lone surrogate" in err("remember", content="bad \ud800 text")
    assert "lone surrogate" in err("memory", action="\udc00")
    assert ctx.store.list_files() == []

    zs = make_ctx("zerostack", "api-2a0e6f52")
    with pytest.raises(ToolError) as info:
        run(zs, "memory_read", source="everything")
    assert info.value.message == "unknown source: everything"


def test_a_tool_of_another_layout_is_not_found(make_ctx):
    ctx = make_ctx("duragent", "ops-bot")
    with pytest.raises(ToolError) as info:
        run(ctx, "memory_write", target="daily", content="x")
    assert (info.value.code, info.value.status) == ("not_found", 404)
    assert "recall" in info.value.message  # it says what the workspace offers
