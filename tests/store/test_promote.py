"""Promotion text: headings for the chooser, insertion under a heading, fitting entries."""

from __future__ import annotations

from memoryui.rendering import render_markdown
from memoryui.store import promote
from memoryui.store.entries import parse_daily

TARGET = """# ops-bot memory

## Facts
- I work for Initech.

## Lessons
- Check canaries.

```md
## not a heading (code)
```

### Deploys
- Fridays are risky.

## Contacts
- Bob is on call.
"""


def test_headings_skip_code_and_front_matter_and_know_setext() -> None:
    found = promote.headings(TARGET)
    assert [(h.level, h.text) for h in found] == [
        (1, "ops-bot memory"), (2, "Facts"), (2, "Lessons"), (3, "Deploys"), (2, "Contacts")]
    assert [h.index for h in found] == [0, 1, 2, 3, 4]
    assert found[2].marker == "##"
    skill = "---\nname: x\n---\n\n# Title\n\nPara\n---\n\nSetext\n======\n"
    assert [(h.level, h.text) for h in promote.headings(skill)] == [
        (1, "Title"), (2, "Para"), (1, "Setext")]
    assert promote.headings("- item\n---\n") == []  # a list item then a rule


def test_insert_at_the_end_of_a_section_before_the_next_same_level_heading() -> None:
    out = promote.insert(TARGET, "- New lesson.", 2)  # under "## Lessons"
    before, after = out.split("- New lesson.")
    assert "### Deploys\n- Fridays are risky.\n\n" in before  # its subsections stay above
    assert after.startswith("\n\n## Contacts\n")
    assert out.count("## Contacts") == 1


def test_insert_under_the_last_heading_and_at_the_end() -> None:
    assert promote.insert(TARGET, "- X", 4).endswith("## Contacts\n- Bob is on call.\n\n- X\n")
    assert promote.insert(TARGET, "- X", None).endswith("- Bob is on call.\n\n- X\n")
    assert promote.insert(TARGET, "- X", 99).endswith("- Bob is on call.\n\n- X\n")
    assert promote.insert("", "- X", None) == "- X\n"
    assert promote.insert("no newline", "- X", None) == "no newline\n\n- X\n"


def test_entry_headings_are_demoted_below_the_target_heading() -> None:
    entry = "Found the cause.\n\n## Root cause\n\nA lock.\n\n### Detail\n\nMore."
    block = promote.fit_block(entry, 2)
    assert "### Root cause" in block and "#### Detail" in block
    assert "\n## Root cause" not in block
    out = promote.insert(TARGET, block, promote.headings(TARGET)[2].index)
    levels = [(h.level, h.text) for h in promote.headings(out)]
    # The promoted headings sit inside "Lessons"; "Contacts" is still a top section.
    assert levels == [(1, "ops-bot memory"), (2, "Facts"), (2, "Lessons"), (3, "Deploys"),
                      (3, "Root cause"), (4, "Detail"), (2, "Contacts")]


def test_demotion_past_level_six_becomes_bold_and_setext_becomes_atx() -> None:
    block = promote.fit_block("#### Deep\n\n###### Deeper\n", 4)
    assert block.split("\n") == ["##### Deep", "", "**Deeper**"]
    block = promote.fit_block("Intro\n\nTitle\n-----\n\n### Sub\n", 2)
    assert block.split("\n") == ["Intro", "", "### Title", "", "#### Sub"]
    assert promote.fit_block("# Top\n", 0) == "# Top"  # no heading above: kept


def test_code_fences_stay_intact_and_unclosed_fences_are_closed() -> None:
    entry = "Ran it:\n\n```sh\n## not a heading\n$ deploy --force\n```\n\n## Heading"
    block = promote.fit_block(entry, 2)
    assert "```sh\n## not a heading\n$ deploy --force\n```" in block
    assert "### Heading" in block
    unclosed = promote.fit_block("Log:\n\n~~~~\nERROR x\n## y", 2)
    assert unclosed.endswith("~~~~\nERROR x\n## y\n~~~~")
    out = promote.insert(TARGET, unclosed, 2)
    # The rest of the target still renders as headings, not as code.
    html = render_markdown(out)
    assert "<h2" in html.split("ERROR x")[1] and "Contacts" in html.split("ERROR x")[1]


def test_longer_fences_need_a_closing_fence_as_long() -> None:
    text = "````\n```\n## inside\n````\n## outside\n"
    assert [h.text for h in promote.headings(text)] == ["outside"]


def test_format_entries_joins_fitted_entries_from_a_daily_log() -> None:
    daily = ("# 2026-02-12\n\n## 09:15\n\nDeploy went fine.\n\n## 10:02\n\nRoot cause:\n\n"
             "## Why\n\n```py\nprint('## x')\n```\n")
    entries = parse_daily(daily)
    block = promote.format_entries([e.text for e in entries], 2)
    assert block == ("Deploy went fine.\n\nRoot cause:\n\n### Why\n\n```py\nprint('## x')\n```")


def test_provenance_trailers_round_trip() -> None:
    key, value = promote.promoted_from("agents/a/memory/daily/2026-02-12.md", "0915-ab12cd34")
    assert key == "Promoted-From"
    assert promote.parse_promoted_from(value) == ("agents/a/memory/daily/2026-02-12.md",
                                                  "0915-ab12cd34")
    assert promote.parse_promoted_from("no-hash") is None
    assert promote.parse_promoted_from("#x") is None
