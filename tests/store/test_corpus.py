"""The benchmark corpus must look like a real memoryui workspace and be reproducible.

Benchmarks compare figures across runs, so the generator's output is checked the way a user of
the workspace would see it: files per kind, Duragent's daily format, clean git state, attributed
history, and the same HEAD sha on every build.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from bench.corpus import PRESETS, build_corpus, main, paraphrase_facts

DAILY_ENTRY = re.compile(r"^## (\d{2}):(\d{2})$", re.M)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, check=True, capture_output=True, text=True
    ).stdout


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    path = tmp_path_factory.mktemp("corpus") / "ws"
    return path, build_corpus(path, "small")


def test_file_counts_match_the_preset(small: tuple[Path, dict]) -> None:
    path, stats = small
    p = PRESETS["small"]
    agents = sorted(d.name for d in (path / "agents").iterdir())
    assert agents == sorted(stats["scopes"]) and len(agents) == p.scopes
    assert stats["scopes"][0] == "ops-bot"
    for a in agents:
        mem = path / "agents" / a / "memory"
        assert len(list((mem / "daily").glob("*.md"))) == p.days
        assert len(list((mem / "notes").glob("*.md"))) == p.notes_per_scope
        assert 1024 <= (mem / "MEMORY.md").stat().st_size <= 6 * 1024
        scratch = (mem / "SCRATCHPAD.md").read_text()
        assert "- [ ] " in scratch and "- [x] " in scratch
    world = sorted(f.stem for f in (path / "memory" / "world").glob("*.md"))
    handbook = sorted(f"handbook-{f['file']}" for f in paraphrase_facts())
    assert sorted(set(handbook)) == [t for t in world if t.startswith("handbook-")]
    topics = [t for t in world if not t.startswith("handbook-")]
    assert topics == sorted(stats["world_topics"]) and len(topics) == p.world_topics
    assert all(re.fullmatch(r"[a-z0-9_-]+", t) for t in world)
    assert (path / "memory" / "world" / "people.md").read_text().startswith("# People\n")
    assert (path / "memory" / "MEMORY.md").is_file()
    assert (path / "directives" / "memory.md").read_text().strip()
    skills = list((path / "skills").glob("*/SKILL.md"))
    assert skills
    for skill in skills:
        text = skill.read_text()
        assert text.startswith(f"---\nname: {skill.parent.name}\ndescription: ")
    tracked = git(path, "ls-files").splitlines()
    assert len(tracked) == stats["files"]
    assert stats["kinds"]["daily"] == p.scopes * p.days


def test_daily_logs_use_duragents_format(small: tuple[Path, dict]) -> None:
    path, _ = small
    daily = path / "agents" / "ops-bot" / "memory" / "daily"
    files = sorted(daily.glob("*.md"))
    assert files[-1].name == "2026-11-20.md"
    for f in files:
        text = f.read_text()
        assert text.startswith(f"# {f.stem}\n\n## ")
        assert text.count(f"# {f.stem}\n") == 1
        times = [(int(h), int(m)) for h, m in DAILY_ENTRY.findall(text)]
        assert 2 <= len(times) <= 8
        assert times == sorted(set(times))
        # every entry is "\n## HH:MM\n\n{content}\n"
        for chunk in re.split(r"\n(?=## \d{2}:\d{2}\n)", text)[1:]:
            assert re.match(r"## \d{2}:\d{2}\n\n\S", chunk)
            assert chunk.endswith("\n")


def test_git_state_is_clean_and_attributed(small: tuple[Path, dict]) -> None:
    path, stats = small
    assert git(path, "status", "--porcelain") == ""
    assert git(path, "rev-parse", "--abbrev-ref", "HEAD").strip() == "main"
    assert int(git(path, "rev-list", "--count", "HEAD")) == stats["commits"]
    assert (path / ".git" / "objects" / "info" / "commit-graph").is_file()

    log = git(path, "log", "--author=ops-bot", "--format=%an <%ae>%n%B%x00")
    messages = [m.strip() for m in log.split("\x00") if m.strip()]
    assert len(messages) >= PRESETS["small"].days
    for m in messages:
        assert m.startswith("ops-bot <ops-bot@agents.memoryui>\n")
        assert "\nMemoryui-Actor: agent:ops-bot\nMemoryui-Tool: " in m
    remember = git(path, "log", "-1", "--format=%B", "--",
                   "agents/ops-bot/memory/daily/2026-11-20.md")
    assert remember == (
        "remember: agents/ops-bot/memory/daily/2026-11-20.md\n\n"
        "Memoryui-Actor: agent:ops-bot\nMemoryui-Tool: remember\n\n"
    )
    people = git(path, "log", "--author=@users.memoryui", "--format=%B")
    assert "Memoryui-Actor: user:" in people and "Memoryui-Tool: edit" in people
    dates = git(path, "log", "--format=%ct").split()
    assert dates == sorted(dates, key=int, reverse=True)


def test_building_twice_gives_the_same_history(small: tuple[Path, dict],
                                               tmp_path: Path) -> None:
    path, stats = small
    again = build_corpus(tmp_path / "again", "small")
    assert again["head"] == stats["head"] == git(path, "rev-parse", "HEAD").strip()
    other = build_corpus(tmp_path / "other", "small", seed=8)
    assert other["head"] != stats["head"]


def test_refuses_a_non_empty_directory_unless_forced(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture) -> None:
    target = tmp_path / "ws"
    target.mkdir()
    (target / "keep.txt").write_text("mine")
    assert main(["--preset", "small", "--dir", str(target)]) == 2
    assert (target / "keep.txt").read_text() == "mine"
    assert main(["--preset", "small", "--dir", str(target), "--force"]) == 0
    assert not (target / "keep.txt").exists()
    assert "files" in capsys.readouterr().out
