"""SKILL.md front matter: only the Agent Skills keys, and each refusal names its rule."""

from __future__ import annotations

import pytest
import yaml

from memoryui.store import skills
from memoryui.store.skills import SkillError

GOOD = ("---\nname: db-failover\ndescription: Fail the orders database over to its standby. "
        "Use when the primary is down for more than five minutes.\n---\n\n# Failover\n\n1. Page.\n")


def test_valid_skill_parses_with_its_body() -> None:
    skill = skills.parse(GOOD, "db-failover")
    assert skill.name == "db-failover"
    assert skill.description.startswith("Fail the orders database")
    assert skill.body == "\n# Failover\n\n1. Page.\n"


def test_all_optional_spec_keys_are_accepted() -> None:
    text = ("---\nname: x-ray\ndescription: Looks inside. Use when curious.\nlicense: MIT\n"
            "compatibility: Needs git 2.40+\nmetadata:\n  owner: alice\n  version: '2'\n"
            "allowed-tools: Bash(git:*) Read\n---\nbody\n")
    assert skills.problems(text, "x-ray") == []


@pytest.mark.parametrize(("text", "folder", "rule"), [
    ("# no front matter\n", "x", "must start with YAML front matter"),
    ("---\nname: x\ndescription: d\n", "x", "must start with YAML front matter"),
    ("---\nname: [x\n---\n", "x", "not valid YAML"),
    ("---\n- a list\n---\n", "x", "must be a YAML mapping"),
    ("---\nname: x\ndescription: d\nmodel: opus\n---\n", "x", "'model' not allowed"),
    ("---\ndescription: d\n---\n", "x", "name: required"),
    ("---\nname: Db-Failover\ndescription: d\n---\n", "Db-Failover", "lowercase letters"),
    ("---\nname: db--failover\ndescription: d\n---\n", "db--failover", "single hyphens"),
    ("---\nname: -db\ndescription: d\n---\n", "-db", "not starting or ending"),
    ("---\nname: db-\ndescription: d\n---\n", "db-", "not starting or ending"),
    (f"---\nname: {'a' * 65}\ndescription: d\n---\n", "a" * 65, "at most 64 characters"),
    ("---\nname: other\ndescription: d\n---\n", "db-failover", "must equal the skill's folder"),
    ("---\nname: x\n---\n", "x", "description: required"),
    ("---\nname: x\ndescription: ''\n---\n", "x", "description: required"),
    (f"---\nname: x\ndescription: {'d' * 1025}\n---\n", "x", "at most 1024 characters"),
    ("---\nname: x\ndescription: Use <b>this</b>\n---\n", "x", "must not contain '<' or '>'"),
    ("---\nname: x\ndescription: d\ncompatibility: ''\n---\n", "x", "compatibility: must be"),
    ("---\nname: x\ndescription: d\nmetadata: just text\n---\n", "x", "metadata: must be a map"),
    ("---\nname: x\ndescription: d\nmetadata:\n  a: [1]\n---\n", "x", "metadata: must be a map"),
    ("---\nname: x\ndescription: d\nallowed-tools: ''\n---\n", "x", "allowed-tools:"),
    ("---\nname: 12\ndescription: d\n---\n", "12", "name: must be text"),
])
def test_each_broken_rule_is_named(text: str, folder: str, rule: str) -> None:
    with pytest.raises(SkillError) as exc:
        skills.validate(text, folder)
    assert rule in str(exc.value)
    assert exc.value.status == 400


def test_all_problems_are_reported_at_once() -> None:
    found = skills.problems("---\nname: Bad\nextra: 1\n---\n", "bad")
    assert len(found) == 4  # unknown key, name case, name != folder, no description
    assert found[0].startswith("keys:")


def test_build_emits_only_spec_keys_in_order_and_round_trips() -> None:
    text = skills.build("db-failover", "Fail over: the standby. Use when 'primary' is down.",
                        "# Failover\n\nSteps.\n", license="MIT", metadata={"owner": "ops"},
                        allowed_tools="Read")
    source, body = skills.split_front_matter(text)
    data = yaml.safe_load(source)
    assert list(data) == ["name", "description", "license", "metadata", "allowed-tools"]
    assert data["description"] == "Fail over: the standby. Use when 'primary' is down."
    assert body == "\n# Failover\n\nSteps.\n"
    assert skills.problems(text, "db-failover") == []


def test_build_with_an_empty_description_fails_validation_by_its_rule() -> None:
    text = skills.build("new-skill", "", "# New\n")
    assert skills.problems(text, "new-skill") == [
        "description: required, 1-1024 characters saying what the skill does and when to "
        "use it"]


def test_with_description_sets_only_the_description() -> None:
    text = GOOD.replace("---\n\n", "license: MIT\n---\n\n")
    new = skills.with_description(text, "Fail over. Use when the primary is down.")
    assert skills.parse(new, "db-failover").fields == {
        "name": "db-failover", "description": "Fail over. Use when the primary is down.",
        "license": "MIT"}
    assert new.endswith("---\n\n# Failover\n\n1. Page.\n")
    assert skills.with_description("# no front matter\n", "x") == "# no front matter\n"
