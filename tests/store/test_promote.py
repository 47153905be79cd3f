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


# -- fitting the target's local style ----------------------------------------------------------

def fit(target: str, texts: list[str], place: int | None = None) -> str:
    """Insert entries the way the editor's draft does (style of the place, then insert)."""
    base = promote.level_at(target, place)
    block, tight = promote.fit_entries(texts, base, promote.style_at(target, place))
    return promote.insert(target, block, place, tight=tight)


def test_into_a_bullet_list_an_entry_becomes_an_item_with_the_same_marker() -> None:
    out = fit(TARGET, ["Canary at 5% caught the bad build."], 1)  # under ## Facts
    assert out.startswith("# ops-bot memory\n\n## Facts\n- I work for Initech.\n"
                          "- Canary at 5% caught the bad build.\n\n## Lessons\n")
    star = "# Notes\n\n* one\n* two\n"
    assert fit(star, ["three"]) == "# Notes\n\n* one\n* two\n* three\n"
    plus = "  + indented one\n  + indented two\n"
    assert fit(plus, ["three"]) == "  + indented one\n  + indented two\n  + three\n"


def test_a_multi_line_entry_is_an_item_with_indented_continuation() -> None:
    out = fit("# M\n\n- a\n- b\n", ["First line.\nSecond line.\n\nA new paragraph."])
    assert out == ("# M\n\n- a\n- b\n- First line.\n    Second line.\n\n    A new paragraph.\n")
    html = render_markdown(out)
    assert html.count("<li>") == 3 and "A new paragraph." in html.split("</ul>")[0]


def test_numbered_lists_continue_their_numbering_and_delimiter() -> None:
    assert fit("1. one\n2. two\n", ["three", "four"]) == "1. one\n2. two\n3. three\n4. four\n"
    out = fit("# Steps\n\n9) nine\n", ["ten\nmore"])
    assert out == "# Steps\n\n9) nine\n10) ten\n    more\n"


def test_nested_lists_take_the_top_level_item_and_loose_lists_stay_loose() -> None:
    nested = "# L\n\n- top\n  - nested\n    - deeper\n- last top\n  * nested star\n"
    assert fit(nested, ["new"]).endswith("  * nested star\n- new\n")
    loose = "# L\n\n1. one\n\n2. two\n   - sub\n"
    assert fit(loose, ["three", "four"]) == "# L\n\n1. one\n\n2. two\n   - sub\n\n3. three\n\n4. four\n"


def test_after_prose_or_code_or_a_rule_an_entry_is_a_paragraph() -> None:
    prose = "# P\n\nSome prose.\n- not a list start? no: a lazy line\nMore prose.\n"
    assert fit(prose, ["Fact."]) == prose + "\nFact.\n"
    code = "# C\n\n```\n- in code\n```\n"
    assert fit(code, ["Fact."]) == code + "\nFact.\n"
    rule = "# R\n\n---\n"
    assert fit(rule, ["Fact."]) == rule + "\nFact.\n"
    assert promote.style_at("# Empty section\n") == promote.PROSE


def test_a_heading_section_gets_the_style_of_its_own_end() -> None:
    # ## Lessons ends with a code block (prose style); ## Contacts ends with a list.
    lessons = fit(TARGET, ["Watch the canary."], 2)
    assert "```\n\nWatch the canary.\n\n### Deploys" not in lessons  # section runs past ###
    assert "- Fridays are risky.\n- Watch the canary.\n\n## Contacts" in lessons
    contacts = fit(TARGET, ["Alice is backup."], 5)
    assert contacts.endswith("## Contacts\n- Bob is on call.\n- Alice is backup.\n")


def test_entries_with_headings_stay_blocks_with_demoted_headings_after_a_list() -> None:
    entry = "Rollback worked.\n\n## Root cause\n\nA lock."
    out = fit(TARGET, ["Simple fact.", entry], 1)
    assert ("## Facts\n- I work for Initech.\n- Simple fact.\n\nRollback worked.\n\n"
            "### Root cause\n\nA lock.\n\n## Lessons") in out


def test_an_entry_that_is_a_list_gives_one_item_per_item() -> None:
    out = fit("1. one\n", ["- a\n- b\n  b more"])
    assert out == "1. one\n2. a\n3. b\n    b more\n"


def test_provenance_marker_links_back_relative_to_the_target() -> None:
    daily = "agents/ops-bot/memory/daily/2026-11-21.md"
    mark = promote.marker("2026-11-21", "ops-bot", daily, "0930-ab12cd34",
                          "agents/ops-bot/memory/MEMORY.md")
    assert mark == "([2026-11-21, ops-bot](daily/2026-11-21.md#e-0930-ab12cd34))"
    shared = promote.marker("2026-11-21", "ops-bot", daily, "0930-ab12cd34", "memory/MEMORY.md")
    assert shared == ("([2026-11-21, ops-bot](../agents/ops-bot/memory/daily/2026-11-21.md"
                      "#e-0930-ab12cd34))")
    assert promote.with_marker("Fact.\nMore.\n\nNext.", mark) == f"Fact.\nMore. {mark}\n\nNext."
    assert promote.with_marker("## Title\nText.", mark) == f"## Title {mark}\nText."
    assert promote.with_marker("Title\n=====\nx", mark) == f"Title {mark}\n=====\nx"
    assert promote.with_marker("- a\n- b", mark) == f"- a {mark}\n- b"
    assert promote.with_marker("```sh\nx\n```", mark) == f"```sh\nx\n```\n\n{mark}"
    # Moved to another target, the link still reaches the same entry.
    assert promote.relink(f"- Fact. {mark}", "agents/ops-bot/memory/MEMORY.md",
                          "memory/MEMORY.md") == f"- Fact. {shared}"
    html = render_markdown(fit("- a\n", [promote.with_marker("Fact.", mark)]))
    assert 'href="daily/2026-11-21.md#e-0930-ab12cd34"' in html and "2026-11-21, ops-bot" in html


def test_unfit_takes_items_back_to_entry_texts() -> None:
    assert promote.unfit("3. a\n4. b\n   more\n\nBlock.\n\n### H") == ["a", "b\nmore",
                                                                    "Block.\n\n### H"]
    assert promote.unfit("Just prose.\n\nTwo paragraphs.") == ["Just prose.\n\nTwo paragraphs."]
    # Prose of several entries splits where a paragraph carries a provenance marker.
    m = "([2026-11-21, ops-bot](daily/2026-11-21.md#e-0930))"
    assert promote.unfit(f"One\nline {m}\n\nMore of one.\n\nTwo {m}") == [
        f"One\nline {m}\n\nMore of one.", f"Two {m}"]
    before = "# M\n\nIntro.\n\n## S\n- a\n\n## T\nEnd.\n"
    started = before.replace("- a\n", "- a\n- new\n  more\n")
    edited = started.replace("Intro.", "Intro, fixed.").replace("- new", "- new, edited")
    block, rest = promote.edited_block(before, started, edited)
    assert block == "- new, edited\n  more"
    assert rest == before.replace("Intro.", "Intro, fixed.")
    assert promote.edited_block(before, started, before.replace("Intro.", "X.")) == (
        "", before.replace("Intro.", "X."))  # the lead deleted the entry
