"""Duragent's memory tools, golden against giosakti/duragent's formats and texts."""

from __future__ import annotations

import datetime as dt

import jsonschema
import pytest

from memoryui.tools.duragent import MAX_CONTENT_BYTES, MAX_RECALL_DAYS
from memoryui.tools.registry import find_tool, tools_for
from tests.tools.conftest import commits, disk, error, put, run

DAILY = "agents/ops-bot/memory/daily/2026-02-12.md"
MEMORY = "agents/ops-bot/memory/MEMORY.md"


@pytest.fixture
def ctx(make_ctx):
    return make_ctx("duragent", "ops-bot", world=True)


# -- remember -------------------------------------------------------------------------

@pytest.mark.parametrize("tool,extra", [("remember", {}), ("memory", {"action": "remember"})])
def test_remember_twice_writes_the_date_header_once(ctx, clock, tool, extra):
    first = run(ctx, tool, content="Learned something", **extra)
    clock.when = clock.when.replace(minute=5)
    second = run(ctx, tool, content="Another thing", **extra)

    assert first == second == f"Remembered. Written to {DAILY}"
    assert disk(ctx, DAILY) == (
        "# 2026-02-12\n\n## 14:03\n\nLearned something\n\n## 14:05\n\nAnother thing\n")


def test_remember_writes_content_verbatim_by_local_date_and_time(ctx, clock):
    # 01:30 on the 13th in UTC+7 is still the 12th in UTC: the local date wins.
    clock.when = dt.datetime(2026, 2, 13, 1, 30, tzinfo=dt.timezone(dt.timedelta(hours=7)))
    path = "agents/ops-bot/memory/daily/2026-02-13.md"
    assert run(ctx, "remember", content="  indented\n## not a time\n") == \
        f"Remembered. Written to {path}"
    assert disk(ctx, path) == "# 2026-02-13\n\n## 01:30\n\n  indented\n## not a time\n\n"


def test_each_remember_is_one_commit_by_the_agent(ctx, clock):
    run(ctx, "remember", content="one")
    run(ctx, "memory", action="remember", content="two")
    log = commits(ctx, DAILY)
    assert len(log) == 2
    for c in log:
        assert (c.author, c.email, c.actor) == ("ops-bot", "ops-bot@agents.memoryui",
                                                "agent:ops-bot")
        assert c.tools == ["remember"]
        assert [f.path for f in c.files] == [DAILY]


def test_remember_refuses_missing_and_empty_content(ctx):
    assert error(ctx, "memory", action="remember").message == \
        "'content' is required for remember action"
    err = error(ctx, "memory", action="remember", content="")
    assert (err.message, err.code, err.status) == ("content is required", "invalid_arguments",
                                                   400)
    assert error(ctx, "remember", content="").message == "content is required"
    assert disk(ctx, DAILY) is None


def test_remember_refuses_content_over_the_cap(ctx):
    err = error(ctx, "remember", content="x" * (MAX_CONTENT_BYTES + 1))
    assert (err.code, err.status) == ("payload_too_large", 413)
    assert "262144 bytes" in err.message
    assert disk(ctx, DAILY) is None


# -- recall ---------------------------------------------------------------------------

def test_recall_on_an_empty_workspace(ctx):
    assert run(ctx, "recall") == "No memories found"
    assert run(ctx, "memory", action="recall") == "No memories found"


def test_recall_sections_order_and_separators(ctx, make_ctx):
    put(ctx, "memory/world/systems.md", "## Production\n- DB: PostgreSQL")
    put(ctx, "memory/world/people.md", "# People\n## Alice\n- Role: Engineer\n")
    put(ctx, "memory/world/notes.txt", "not a topic")
    put(ctx, MEMORY, "User prefers concise responses")
    put(ctx, "agents/ops-bot/memory/daily/2026-02-10.md", "# 2026-02-10\n\n## 09:00\n\nOld\n")
    put(ctx, "agents/ops-bot/memory/daily/2026-02-09.md", "# 2026-02-09\n\n## 09:00\n\nOlder\n")
    put(ctx, "agents/other/memory/daily/2026-02-12.md", "# 2026-02-12\n\nsomeone else\n")
    run(ctx, "remember", content="Helped debug issue")

    expected = (
        "# World Knowledge\n\n"
        "## people\n\n# People\n## Alice\n- Role: Engineer\n\n\n"
        "## systems\n\n## Production\n- DB: PostgreSQL"
        "\n\n---\n\n"
        "# Your Memory\n\nUser prefers concise responses"
        "\n\n---\n\n"
        "# Recent Experiences\n\n"
        "# 2026-02-12\n\n## 14:03\n\nHelped debug issue\n"
        "\n\n---\n\n"
        "# 2026-02-10\n\n## 09:00\n\nOld\n"
    )
    assert run(ctx, "recall") == expected  # days=3: 12th, (11th missing), 10th
    assert run(ctx, "memory", action="recall", days=3) == expected
    assert run(ctx, "recall", days=4).endswith("Old\n\n\n---\n\n# 2026-02-09\n\n## 09:00\n\nOlder\n")
    assert "Old" not in run(ctx, "recall", days=1)


def test_recall_skips_an_empty_memory_file_and_missing_sections(ctx):
    put(ctx, MEMORY, "")
    assert run(ctx, "recall") == "No memories found"
    put(ctx, "agents/ops-bot/memory/daily/2026-02-11.md", "# 2026-02-11\n\n## 08:00\n\nx\n")
    assert run(ctx, "recall") == "# Recent Experiences\n\n# 2026-02-11\n\n## 08:00\n\nx\n"


def test_recall_reads_files_with_repeated_date_headers(ctx):
    buggy = ("# 2026-02-12\n\n## 14:03\n\nLearned something\n"
             "# 2026-02-12\n\n## 14:05\n\nAnother thing\n")
    put(ctx, DAILY, buggy)
    assert run(ctx, "recall", days=1) == "# Recent Experiences\n\n" + buggy
    run(ctx, "remember", content="Third")  # appends without a third header
    assert disk(ctx, DAILY) == buggy + "\n## 14:03\n\nThird\n"


def test_recall_clamps_days_and_says_so_in_its_schema(ctx, clock):
    today = clock.when.date()
    for ago in (MAX_RECALL_DAYS - 1, MAX_RECALL_DAYS):
        day = (today - dt.timedelta(ago)).isoformat()
        put(ctx, f"agents/ops-bot/memory/daily/{day}.md", f"# {day}\n\nday {ago} ago\n")
    result = run(ctx, "recall", days=100_000)
    assert "day 89 ago" in result and "day 90 ago" not in result

    for name in ("recall", "memory"):
        days = find_tool("duragent", name, {"action": "recall"}).input_schema["properties"]["days"]
        assert days["maximum"] == MAX_RECALL_DAYS
        assert "clamped" in days["description"]


def test_recall_with_zero_days_loads_world_and_memory_but_no_daily_log(ctx):
    # Duragent: `days` is a usize and 0..0 reads no daily file (seed-systems.md 1.3).
    put(ctx, "memory/world/people.md", "# People\n")
    put(ctx, MEMORY, "User prefers concise answers\n")
    put(ctx, DAILY, "# 2026-02-12\n\n## 09:00\n\nToday's entry\n")
    expected = ("# World Knowledge\n\n## people\n\n# People\n\n\n---\n\n"
                "# Your Memory\n\nUser prefers concise answers\n")
    assert run(ctx, "recall", days=0) == expected
    assert run(ctx, "memory", action="recall", days=0) == expected
    assert "Today's entry" in run(ctx, "recall", days=1)


def test_recall_with_zero_days_and_no_memory_finds_nothing(ctx):
    put(ctx, DAILY, "# 2026-02-12\n\n## 09:00\n\nToday's entry\n")
    assert run(ctx, "recall", days=0) == "No memories found"


def test_recall_refuses_negative_days(ctx):
    err = error(ctx, "recall", days=-1)
    assert (err.code, err.status) == ("invalid_arguments", 400)
    assert "0 or more" in err.message
    assert error(ctx, "memory", action="recall", days=-1).status == 400
    for name in ("recall", "memory"):
        days = find_tool("duragent", name, {"action": "recall"}).input_schema["properties"]["days"]
        assert days["minimum"] == 0


# -- reflect --------------------------------------------------------------------------

def test_reflect_reads_then_writes(ctx):
    empty = "MEMORY.md is empty. Call reflect with content to create it."
    assert run(ctx, "reflect") == empty
    assert run(ctx, "memory", action="reflect") == empty

    assert run(ctx, "memory", action="reflect", content="# Me\n\n- likes tea") == \
        f"Reflected. Updated {MEMORY}"
    assert disk(ctx, MEMORY) == "# Me\n\n- likes tea"
    assert run(ctx, "reflect") == "Current MEMORY.md:\n\n# Me\n\n- likes tea"

    assert run(ctx, "reflect", content="") == f"Reflected. Updated {MEMORY}"
    assert disk(ctx, MEMORY) == ""
    assert run(ctx, "reflect") == empty
    assert [c.tools for c in commits(ctx, MEMORY)] == [["reflect"], ["reflect"]]


# -- update_world ---------------------------------------------------------------------

@pytest.mark.parametrize("topic,path", [
    ("My Topic!", "memory/world/my-topic-.md"),
    ("../x", "memory/world/---x.md"),
    ("Snake_Case-ok", "memory/world/snake_case-ok.md"),
    ("Café", "memory/world/café.md"),
])
def test_update_world_sanitizes_the_topic(ctx, topic, path):
    assert run(ctx, "update_world", topic=topic, content="Some content") == \
        f"Updated world knowledge at {path}"
    assert disk(ctx, path) == "Some content"
    assert ctx.store.list_files("memory/world") == [path]


def test_update_world_replaces_and_may_be_empty(ctx):
    run(ctx, "memory", action="update_world", topic="people", content="Old content")
    run(ctx, "memory", action="update_world", topic="people", content="")
    assert disk(ctx, "memory/world/people.md") == ""
    log = commits(ctx, "memory/world/people.md")
    assert [c.tools for c in log] == [["update_world"], ["update_world"]]
    assert {c.actor for c in log} == {"agent:ops-bot"}


def test_update_world_refuses_an_empty_topic(ctx):
    err = error(ctx, "update_world", topic="", content="x")
    assert (err.code, err.status) == ("invalid_arguments", 400)
    assert "topic must not be empty" in err.message
    assert ctx.store.list_files("memory/world") == []


def test_update_world_needs_the_world_grant(make_ctx):
    ctx = make_ctx("duragent", "ops-bot", world=False)
    for name, args in (("update_world", {}), ("memory", {"action": "update_world"})):
        err = error(ctx, name, topic="people", content="x", **args)
        assert (err.code, err.status) == ("forbidden", 403)
    assert ctx.store.list_files("memory/world") == []
    assert run(ctx, "remember", content="own scope is fine").startswith("Remembered.")


def test_update_world_missing_arguments(ctx):
    assert error(ctx, "memory", action="update_world").message == \
        "'topic' is required for update_world action"
    assert error(ctx, "memory", action="update_world", topic="t").message == \
        "'content' is required for update_world action"


# -- the action-based tool -------------------------------------------------------------

# Duragent's `action` form and Claude's `command` form (memory_20250818), in call order.
BOTH_FORMS = [
    {"action": "remember", "content": "Deploys need the VPN"},
    {"action": "recall", "days": 0},
    {"command": "create", "path": "/memories/plan.md", "file_text": "step 1\n"},
    {"command": "insert", "path": "/memories/plan.md", "insert_line": 1,
     "insert_text": "step 2"},
    {"command": "str_replace", "path": "/memories/plan.md", "old_str": "step 2",
     "new_str": "step 2 (done)", "reason": "finished"},
    {"command": "view", "path": "/memories/plan.md", "view_range": [1, -1]},
    {"command": "rename", "old_path": "/memories/plan.md", "new_path": "/memories/done.md"},
    {"command": "delete", "path": "/memories/done.md"},
    {"action": "reflect"},
]


@pytest.mark.parametrize("fmt", ["anthropic", "openai"])
def test_the_listed_memory_schema_admits_both_forms(fmt):
    tool = {t.name: t for t in tools_for("duragent")}["memory"]
    schema = (tool.anthropic()["input_schema"] if fmt == "anthropic"
              else tool.openai()["function"]["parameters"])
    # What both providers accept: one plain object, no combinator at its top.
    assert schema["type"] == "object"
    assert not {"anyOf", "oneOf", "allOf", "not", "if", "enum"} & set(schema)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    for args in BOTH_FORMS:
        assert not [e.message for e in validator.iter_errors(args)], args
    assert list(validator.iter_errors({"action": "recall", "colour": "red"}))
    assert list(validator.iter_errors({"action": "forget"}))
    assert list(validator.iter_errors({"command": "update_description"}))


def test_both_forms_work_through_the_listed_memory_tool(ctx):
    results = [run(ctx, "memory", **args) for args in BOTH_FORMS]
    assert results[0] == f"Remembered. Written to {DAILY}"
    assert results[1] == "No memories found"  # days 0: the daily log is not loaded
    assert results[2] == "File created successfully at: /memories/plan.md"
    assert results[5] == ("Here's the content of /memories/plan.md with line numbers:\n"
                          "     1\tstep 1\n     2\tstep 2 (done)\n     3\t")
    assert results[7] == "Successfully deleted /memories/done.md"
    assert results[8] == "MEMORY.md is empty. Call reflect with content to create it."


def test_the_memory_tool_says_which_form_it_needs(ctx):
    err = error(ctx, "memory")
    assert err.message == ("missing required field 'action' (or 'command' for Claude's "
                           "memory commands)")
    err = error(ctx, "memory", action="recall", path="/memories")
    assert err.message == "unknown field(s): path; allowed: action, days, content, topic"
    err = error(ctx, "memory", command="view", path="/memories", action="recall")
    assert err.message.startswith("unknown field(s): action")
    assert ctx.store.list_files() == []


def test_unknown_action_gets_duragents_text(ctx):
    err = error(ctx, "memory", action="forget")
    assert err.message == "Unknown action: 'forget'. Use: recall, remember, reflect, update_world"
    assert (err.code, err.status) == ("invalid_arguments", 400)


def test_memory_tool_attributes_each_write_to_its_action(ctx):
    run(ctx, "memory", action="reflect", content="x")
    run(ctx, "memory", action="update_world", topic="t", content="y")
    tools = [c.tools for c in commits(ctx)]
    assert tools == [["update_world"], ["reflect"]]


def test_recall_never_follows_a_symlink_out_of_the_workspace(ctx, tmp_path):
    secret = tmp_path / "secret.md"
    secret.write_text("outside secret")
    put(ctx, "memory/world/people.md", "Alice")
    (ctx.store.root / "memory/world/evil.md").symlink_to(secret)
    assert run(ctx, "recall") == "# World Knowledge\n\n## people\n\nAlice"
