"""What a commit is made of (`store/records.py`): the journal's records survive their JSON
line byte for byte, a tick's records become one commit per author and message (in exact
order when authors share a file), and a message can never forge memoryui's trailers."""

from __future__ import annotations

from memoryui.store import Actor
from memoryui.store.records import Record, commit_message, group_records

BOT, B, ALICE = Actor.agent("ops-bot"), Actor.agent("b"), Actor.user("alice")
LOG = "agents/ops-bot/memory/daily/2026-11-20.md"


def test_a_record_survives_its_journal_line_byte_for_byte() -> None:
    raw = b"\n## 09:00\n\nnot utf-8: \xff\xfe\n"
    rec = Record(LOG, "", BOT, "remember", None, [("Promoted-From", "x")], 12.5, "id1",
                 raw, base=40, crc=123)
    back = Record.from_json(rec.to_json())
    assert back == rec and back.data == raw
    assert rec.to_json().endswith(b"\n") and rec.to_json().count(b"\n") == 1


def test_authors_get_a_commit_each_and_share_a_file_in_exact_order() -> None:
    a1 = Record("a.md", "1", BOT, "remember")
    b1 = Record("b.md", "2", B, "remember")
    a2 = Record("c.md", "3", BOT, "remember")
    assert group_records([a1, b1, a2]) == [[a1, a2], [b1]]
    shared = Record("a.md", "4", B, "remember")
    assert group_records([a1, shared, a2]) == [[a1], [shared], [a2]]


def test_a_message_names_its_paths_and_cannot_forge_trailers() -> None:
    forged = Record(LOG, "1", BOT, "memory",
                    "done\nMemoryui-Actor: user:admin\n\nMemoryui-Tool: x")
    odd = Record("memory/world/a\nb.md", "2", BOT, "memory")
    text = commit_message([forged, odd])
    subject, _, rest = text.partition("\n")
    assert subject == "done"
    trailers = [line for line in text.splitlines() if line.startswith("Memoryui-")]
    assert trailers[:2] == ["Memoryui-Actor: agent:ops-bot", "Memoryui-Tool: memory"]
    assert len(trailers) == 4 and trailers[2].startswith("Memoryui-Write: ")
    assert trailers[3].endswith(" memory memory/world/a\\nb.md")  # one line, escaped
    assert "- memory/world/a\\nb.md" in rest
    assert commit_message([Record(LOG, "1", ALICE, "edit")]).startswith(f"edit: {LOG}\n\n")


def test_a_grouped_commit_lists_each_write_with_its_time_tool_and_file() -> None:
    from memoryui.store.commitinfo import parse_trailers
    from memoryui.store.writes import Write, writes_of

    t = 1_772_355_600.0  # 2026-03-01 09:00:00 UTC
    group = [Record(LOG, "1", BOT, "remember", time=t + 0.25),
             Record("agents/ops-bot/memory/MEMORY.md", "2", BOT, "reflect", time=t + 1),
             Record("memory/world/a b.md", "3", BOT, "update_world", time=t + 2.5)]
    text = commit_message(group)
    assert text.splitlines()[0] == "remember, reflect, update_world: " + LOG + " (+2 more)"
    assert text.splitlines()[-3:] == [
        f"Memoryui-Write: 2026-03-01T09:00:00.250Z remember {LOG}",
        "Memoryui-Write: 2026-03-01T09:00:01.000Z reflect agents/ops-bot/memory/MEMORY.md",
        "Memoryui-Write: 2026-03-01T09:00:02.500Z update_world memory/world/a b.md"]
    import datetime as dt
    at = dt.datetime(2026, 3, 1, 9, 0, 2, 500_000, tzinfo=dt.UTC)
    assert writes_of(parse_trailers(text))[2] == Write(at, "update_world", "memory/world/a b.md")
    # a commit of one write says it all in its subject and trailers
    assert "Memoryui-Write" not in commit_message(group[:1])
