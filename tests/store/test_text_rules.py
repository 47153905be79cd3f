"""Text the store refuses with a clear 400 (never a 500, never a half-written file):
NUL bytes, which make git call a daily log binary, and lone surrogates, which are not UTF-8."""

from __future__ import annotations

import pytest

from memoryui.store import Actor, InvalidName, InvalidText, Store

DAILY = "agents/ops-bot/memory/daily/2026-03-01.md"
BOT = Actor.agent("ops-bot")


@pytest.mark.parametrize(("text", "message"), [
    ("before\x00after\n", r"NUL byte \(\\x00\) on line (1|2):"),
    ("\x00", "NUL byte"),
    ("first\nlone \ud800 surrogate\n", "lone surrogate U\\+D800 on line (2|3)$"),
    ("\udfff", "lone surrogate U\\+DFFF"),
])
def test_bad_text_is_refused_before_anything_is_written(store: Store, text: str,
                                                        message: str) -> None:
    store.write(DAILY, "# 2026-03-01\n", actor=BOT, tool="remember")
    head = store.head()
    for write in (lambda: store.write(DAILY, text, actor=BOT, tool="edit"),
                  lambda: store.append(DAILY, text, actor=BOT, tool="remember")):
        with pytest.raises(InvalidText, match=message) as info:
            write()
        assert info.value.status == 400 and info.value.code == "invalid_arguments"
        assert isinstance(info.value, InvalidName)  # callers mapping InvalidName keep working
    assert store.read(DAILY) == "# 2026-03-01\n"
    assert store.head() == head and store.pending() == []


def test_a_new_file_with_a_nul_is_not_created(store: Store) -> None:
    with pytest.raises(InvalidText):
        store.write(DAILY, "a\x00b", actor=BOT, tool="remember")
    assert not (store.root / DAILY).exists() and store.head() is None


def test_a_natively_written_nul_does_not_block_clean_appends(store: Store) -> None:
    (store.root / DAILY).parent.mkdir(parents=True)
    (store.root / DAILY).write_bytes(b"# 2026-03-01\n\x00 from a native writer\n")
    store.commit_pending()
    store.append(DAILY, "\n## 10:00\n\nclean entry\n", actor=BOT, tool="remember")
    assert store.read(DAILY).endswith("clean entry\n")
    with pytest.raises(InvalidText):
        store.append(DAILY, "another \x00\n", actor=BOT, tool="remember")


def test_other_control_characters_in_text_are_kept(store: Store) -> None:
    text = "tab\there\r\nform\x0cfeed \u2028 line sep\n"
    store.write(DAILY, text, actor=BOT, tool="edit")
    assert store.read(DAILY) == text
