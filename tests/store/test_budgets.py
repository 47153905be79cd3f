"""Where an agent's view of a file is cut: one rule for the tools, the meters and the file page."""

from __future__ import annotations

from memoryui.store import Kind, Store, budgets, get_layout
from memoryui.store.budgets import Budget, count_lines, cut


def test_dagu_keeps_200_newline_separated_parts_and_appends_its_notice() -> None:
    text = "".join(f"line {i}\n" for i in range(1, 206))
    found = cut("dagu", Kind.MEMORY, text)
    assert found is not None and found.hard and found.kept_lines == 200
    assert found.hidden_lines == 5
    shown = found.apply(text, "/dags/memory/dags/etl/MEMORY.md")
    assert shown == ("".join(f"line {i}\n" for i in range(1, 200)) + "line 200"
                     "\n[... truncated at 200 lines. Use read tool for full file: "
                     "/dags/memory/dags/etl/MEMORY.md]")
    assert cut("dagu", "global", "a\n" * 199) is None


def test_dagu_truncates_a_200_line_file_ending_in_a_newline_as_dagu_does() -> None:
    text = "x\n" * 200  # strings.Split gives 201 parts: Dagu drops the last newline
    found = cut(get_layout("dagu"), "memory", text)
    assert found is not None
    assert found.apply(text).startswith("x\n" * 199 + "x\n[... truncated at 200 lines.")
    assert found.hidden_lines == 0


def test_zerostack_cuts_at_32_kib_on_a_character_boundary() -> None:
    text = "a" * (32 * 1024 - 1) + "é" + "tail\n"  # é straddles the 32 KiB boundary
    found = cut("zerostack", Kind.NOTE, text)
    assert found is not None and found.partial and not found.skipped
    assert found.kept_bytes == 32 * 1024 - 1
    assert found.apply(text) == "a" * (32 * 1024 - 1) + "\n…[memory truncated]"
    assert found.notice == "…[memory truncated]"
    assert budgets.cap_bytes(text, 32 * 1024) == found.apply(text)
    assert cut("zerostack", Kind.NOTE, "a" * 32 * 1024) is None


def test_zerostack_skips_injecting_a_huge_global_memory() -> None:
    found = cut("zerostack", Kind.GLOBAL, "x" * 200_000)
    assert found is not None and found.skipped
    assert found.apply("x" * 200_000) == "x" * 32 * 1024 + "\n…[memory truncated]"


def test_jutul_index_budget_is_advisory() -> None:
    text = "- entry\n" * 260
    found = cut("jutul", Kind.MEMORY, text)
    assert found is not None and not found.hard and found.kept_lines == 200
    assert found.apply(text) == text  # jutul still loads everything
    assert cut("jutul", Kind.NOTE, text) is None
    assert cut("duragent", Kind.MEMORY, "x\n" * 5000) is None
    assert cut("dagu", None, "x\n" * 500) is None


def test_zerostack_memory_read_returns_exactly_the_cut_text(tmp_path) -> None:
    from memoryui.store import Actor
    from memoryui.tools.registry import ToolContext, call_tool

    store = Store(tmp_path / "ws", "zerostack")
    try:
        text = "ü" * 20_000 + "\nend\n"  # 40,005 bytes, two-byte characters
        path = store.path_for(Kind.NOTE, "proj-1234abcd", "big")
        store.write(path, text, actor=Actor.user("alice"), tool="edit")
        ctx = ToolContext(store, "proj-1234abcd", Actor.agent("proj-1234abcd"))
        result = call_tool(ctx, "memory_read", {"source": "note", "name": "big"})
        assert result == "ü" * 16_384 + "\n…[memory truncated]"
        assert result == cut(store.layout, Kind.NOTE, text).apply(text)
    finally:
        store.close()


def test_budget_meters_and_line_counts() -> None:
    b = Budget(max_bytes=10_000, max_lines=200)
    assert b.state(5_000, 10) == "ok"
    assert b.state(9_000, 10) == "warn"
    assert b.state(100, 201) == "over"
    assert b.ratio(2_000, 150) == 0.75
    assert [count_lines(t) for t in ("", "a", "a\n", "a\nb", "a\n\n")] == [0, 1, 1, 2, 2]
