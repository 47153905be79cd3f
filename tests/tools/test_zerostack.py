"""zerostack's memory_search, by keyword and by meaning, golden against zerostack's texts."""

from __future__ import annotations

import pytest

from tests.tools.conftest import error, put, run
from tests.tools.zerostack_project import DAILY, SLUG, P


@pytest.fixture
def ctx(make_ctx):
    return make_ctx("zerostack", SLUG, global_=True)


def test_slug_matches_the_reference_vector():
    assert SLUG == "api-2a0e6f52"


# -- memory_search ----------------------------------------------------------------------

def setup_search(ctx) -> None:
    put(ctx, "MEMORY.md", "- deploy with ansible\n- prefers tea\n")
    put(ctx, f"{P}/notes/deploy.md", "\n".join(
        ["# Deploy", "Use ansible for deploys.", "Rollback: ansible-playbook rollback.yml"]
        + [f"s{i}" for i in range(3, 11)] + ["ansible again", "tail"]) + "\n")
    put(ctx, f"{P}/notes/tea.md", "\nGreen is best.\n\n  \nOolong.\nSencha.\nMatcha.\n")
    put(ctx, f"{P}/daily/2026-02-10.md", "worked on ANSIBLE roles\n")
    put(ctx, f"{P}/daily/2026-02-12.md", "ansible inventory fixed\n")
    put(ctx, "projects/other-00000000/notes/x.md", "ansible elsewhere\n")


def test_search_summary_ranking_windows_and_filename_match(ctx):
    setup_search(ctx)
    assert run(ctx, "memory_search", query="ansible  tea Ansible") == (
        "Searched 2 terms: ansible(6) tea(1) across 5 files. Showing top 5 by relevance.\n\n"
        "MEMORY.md  [matched: ansible, tea]\n- deploy with ansible\n- prefers tea\n…\n\n"
        f"{P}/notes/deploy.md  [matched: ansible]\n"
        "# Deploy\nUse ansible for deploys.\nRollback: ansible-playbook rollback.yml\n"
        "s3\ns4\ns5\n…\ns8\ns9\ns10\nansible again\ntail\n…\n\n"
        f"{DAILY}  [matched: ansible]\nansible inventory fixed\n…\n\n"
        f"{P}/daily/2026-02-10.md  [matched: ansible]\nworked on ANSIBLE roles\n…\n\n"
        f"{P}/notes/tea.md  [matched: tea]\n(filename match)\nGreen is best.\nOolong.\nSencha.")


def test_search_without_hits(ctx):
    setup_search(ctx)
    assert run(ctx, "memory_search", query="kubernetes") == "No matches for 'kubernetes'."
    assert run(ctx, "memory_search", query="  ") == "No matches for '  '."


def test_search_treats_terms_literally_and_counts_lines_not_occurrences(ctx):
    put(ctx, f"{P}/notes/re.md", "a.b a.b\naxb\n")
    assert run(ctx, "memory_search", query="a.b") == (
        "Searched 1 term: a.b(1) across 1 file. Showing top 1 by relevance.\n\n"
        f"{P}/notes/re.md  [matched: a.b]\na.b a.b\naxb\n…")


def test_search_shows_at_most_five_windows_per_file(ctx):
    lines = []
    for i in range(7):
        lines += [f"hit {i}"] + [f"pad {i}.{j}" for j in range(7)]
    put(ctx, f"{P}/notes/many.md", "\n".join(lines))
    result = run(ctx, "memory_search", query="hit")
    assert result.startswith("Searched 1 term: hit(7) across 1 file.")
    assert result.count("…") == 5
    assert "hit 4" in result and "hit 5" not in result


def test_search_output_is_capped_and_says_how_many_files_were_left_out(ctx):
    for i in range(40):
        put(ctx, f"{P}/notes/n{i:02}.md", "needle " + "x" * 1000 + "\n")
    blocks = [f"{P}/notes/n{i:02}.md  [matched: needle]\nneedle {'x' * 1000}\n…"
              for i in range(40)]
    size = len(blocks[0].encode())
    shown = 1 + (32 * 1024 - 256 - size) // (size + 2)
    assert shown < 40
    result = run(ctx, "memory_search", query="needle")
    assert result == (
        f"Searched 1 term: needle(40) across 40 files. Showing top {shown} by relevance.\n\n"
        + "\n\n".join(blocks[:shown])
        + f"\n\n…[search truncated, {40 - shown} more files omitted]")
    assert len(result.encode()) <= 32 * 1024


def test_search_and_list_never_follow_a_symlink_out_of_the_workspace(ctx, tmp_path):
    secret = tmp_path / "secret.md"
    secret.write_text("needle outside\n")
    put(ctx, f"{P}/notes/inside.md", "no match here\n")
    (ctx.store.root / f"{P}/notes/evil.md").symlink_to(secret)
    assert run(ctx, "memory_search", query="needle") == "No matches for 'needle'."
    assert run(ctx, "memory_read", source="list") == f"{P}/notes/inside.md"



# -- memory_search by meaning -------------------------------------------------------------

@pytest.fixture
def ctx_index(ctx, tmp_path):
    """The zerostack context with a search index, as the API and MCP give it."""
    from memoryui.search import SearchIndex

    index = SearchIndex(tmp_path / "search.sqlite3", catch_up_interval=0, background=False)
    index.attach(ctx.store)
    ctx.search_index = lambda: index
    yield ctx
    index.close()


def test_search_adds_files_near_in_meaning_in_zerostacks_format(ctx_index):
    ctx = ctx_index
    put(ctx, f"{P}/notes/nightly.md", "# Storage\n\nPostgres dumps happen nightly at 02:00.\n")
    put(ctx, f"{P}/notes/tea.md", "Green is best.\n")
    put(ctx, "projects/other-00000000/notes/db.md", "Database dumps of the other project.\n")
    assert run(ctx, "memory_search", query="database backups", mode="keyword") == (
        "No matches for 'database backups'.")
    got = run(ctx, "memory_search", query="database backups")
    assert got == run(ctx, "memory_search", query="database backups", mode="hybrid")
    assert got.startswith("Searched 2 terms: database(0) backups(0) across 1 file. "
                          "Showing top 1 by relevance.\n\n")
    assert got.endswith(f"{P}/notes/nightly.md  [matched: \u2014]\n"
                        "# Storage\n\nPostgres dumps happen nightly at 02:00.\n\u2026")
    assert "other-00000000" not in got  # only the files zerostack's search looks at


def test_search_ranks_keyword_and_meaning_together(ctx_index):
    ctx = ctx_index
    put(ctx, f"{P}/notes/backups.md", "Postgres dumps happen nightly at 02:00.\n")
    put(ctx, f"{P}/notes/postgres.md", "Postgres upgrade planned for March.\n")
    got = run(ctx, "memory_search", query="postgres backups")
    first = got.split("\n\n")[1]
    assert first.startswith(f"{P}/notes/backups.md  [matched: postgres]")
    assert f"{P}/notes/postgres.md  [matched: postgres]" in got


def test_search_mode_is_checked(ctx_index):
    assert "unknown mode: vectors" in error(ctx_index, "memory_search", query="x",
                                            mode="vectors").message
