"""SKILL.md in the Agent Skills format: parse, validate and build the front matter.

Promotion writes skills that Duragent, jutul-agent, Dagu and Anthropic's validators all
accept, so only the spec's keys are allowed and every refusal names the rule it breaks
(reference: peers-and-specs.md section 4.2; `skills-ref` validator, `quick_validate.py`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import yaml

from .errors import StoreError
from .names import SKILL_RE

ALLOWED_KEYS = ("name", "description", "license", "compatibility", "metadata", "allowed-tools")
MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_COMPATIBILITY = 500

_OPEN_RE = re.compile(r"\A---[ \t]*\r?\n")
_CLOSE_RE = re.compile(r"^---[ \t]*$", re.M)


class SkillError(StoreError):
    """Front matter that breaks an Agent Skills rule; `problems` lists every broken rule."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("invalid SKILL.md front matter: " + "; ".join(problems))


@dataclass
class Skill:
    name: str
    description: str
    body: str
    fields: dict[str, object] = field(default_factory=dict)  # every key as parsed


def split_front_matter(text: str) -> tuple[str | None, str]:
    """(YAML source, body); the YAML is None when the text does not start with `---`."""
    m = _OPEN_RE.match(text)
    if not m:
        return None, text
    close = _CLOSE_RE.search(text, m.end())
    if close is None:
        return None, text
    body = text[close.end():]
    if body.startswith("\r\n"):
        body = body[2:]
    elif body.startswith("\n"):
        body = body[1:]
    return text[m.end():close.start()], body


def problems(text: str, folder: str | None = None) -> list[str]:
    """Every broken rule, in the order a reader fixes them; [] for a valid SKILL.md."""
    source, _body = split_front_matter(text)
    if source is None:
        return ["front matter: SKILL.md must start with YAML front matter between two "
                "'---' lines"]
    try:
        data = yaml.safe_load(source) if source.strip() else {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 2})" if mark is not None else ""
        return [f"front matter: not valid YAML{where}: {getattr(exc, 'problem', exc)}"]
    if not isinstance(data, dict):
        return ["front matter: must be a YAML mapping of keys to values"]
    out: list[str] = []
    unknown = [str(k) for k in data if k not in ALLOWED_KEYS]
    if unknown:
        out.append(f"keys: {', '.join(repr(k) for k in unknown)} not allowed; the Agent "
                   f"Skills spec allows only {', '.join(ALLOWED_KEYS)}")
    out += name_problems(data.get("name"), folder)
    out += _description_problems(data.get("description"))
    if "license" in data and not _nonempty_str(data["license"]):
        out.append("license: must be a short license name or a bundled file reference")
    if "compatibility" in data:
        value = data["compatibility"]
        if not _nonempty_str(value) or len(value) > MAX_COMPATIBILITY:
            out.append(f"compatibility: must be 1-{MAX_COMPATIBILITY} characters of text")
    if "metadata" in data:
        value = data["metadata"]
        if not isinstance(value, dict) or any(
                isinstance(v, dict | list) or v is None for v in value.values()):
            out.append("metadata: must be a map of string keys to string values")
    if "allowed-tools" in data and not _nonempty_str(data["allowed-tools"]):
        out.append("allowed-tools: must be a space-separated list of tools, e.g. "
                   "'Bash(git:*) Read'")
    return out


def _nonempty_str(value: object) -> bool:
    return isinstance(value, str) and bool(value.strip())


def name_problems(name: object, folder: str | None = None) -> list[str]:
    if name is None or name == "":
        return ["name: required (lowercase letters, digits and hyphens, equal to the "
                "skill's folder name)"]
    if not isinstance(name, str):
        return ["name: must be text"]
    out = []
    if len(name) > MAX_NAME:
        out.append(f"name: at most {MAX_NAME} characters (it has {len(name)})")
    if not SKILL_RE.match(name):
        out.append(f"name: {name!r} must use only lowercase letters, digits and single "
                   "hyphens, not starting or ending with a hyphen")
    if folder is not None and name != folder:
        out.append(f"name: {name!r} must equal the skill's folder name {folder!r}")
    return out


def _description_problems(desc: object) -> list[str]:
    if desc is None or (isinstance(desc, str) and not desc.strip()):
        return [f"description: required, 1-{MAX_DESCRIPTION} characters saying what the "
                "skill does and when to use it"]
    if not isinstance(desc, str):
        return ["description: must be text"]
    out = []
    if len(desc) > MAX_DESCRIPTION:
        out.append(f"description: at most {MAX_DESCRIPTION} characters (it has {len(desc)})")
    if "<" in desc or ">" in desc:
        out.append("description: must not contain '<' or '>'")
    return out


def parse(text: str, folder: str | None = None) -> Skill:
    """A valid skill, or SkillError naming every broken rule."""
    found = problems(text, folder)
    if found:
        raise SkillError(found)
    source, body = split_front_matter(text)
    data = yaml.safe_load(source or "") or {}
    return Skill(data["name"], data["description"], body, dict(data))


def validate(text: str, folder: str | None = None) -> None:
    found = problems(text, folder)
    if found:
        raise SkillError(found)


def description_of(text: str) -> str | None:
    """The front matter's description as text ("" when missing); None when the text has
    no front matter that is a YAML mapping."""
    data = _front_matter(text)
    if data is None:
        return None
    value = data.get("description")
    return "" if value is None else str(value)


def with_description(text: str, description: str) -> str:
    """The text with its front matter's description set to `description`: the other keys
    keep their order and values, the body stays byte for byte. Text without a YAML mapping
    front matter comes back as it is (the save names that rule)."""
    data = _front_matter(text)
    opened = _OPEN_RE.match(text)
    close = _CLOSE_RE.search(text, opened.end()) if opened else None
    if data is None or close is None:
        return text
    data["description"] = description
    return f"---\n{_dump(data)}{text[close.start():]}"


def _front_matter(text: str) -> dict | None:
    source, _body = split_front_matter(text)
    if source is None:
        return None
    try:
        data = yaml.safe_load(source) if source.strip() else {}
    except yaml.YAMLError:
        return None
    return data if isinstance(data, dict) else None


def _dump(data: dict) -> str:
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=10_000,
                          default_flow_style=False)


def build(name: str, description: str, body: str, *, license: str | None = None,
          compatibility: str | None = None, metadata: dict[str, str] | None = None,
          allowed_tools: str | None = None) -> str:
    """A new SKILL.md: spec keys only, in the spec's order, YAML-quoted where needed.

    Not validated here: the editor shows the draft and the save validates it, so a
    missing description is reported by its rule rather than silently invented.
    """
    data: dict[str, object] = {"name": name, "description": description}
    if license:
        data["license"] = license
    if compatibility:
        data["compatibility"] = compatibility
    if metadata:
        data["metadata"] = {str(k): str(v) for k, v in metadata.items()}
    if allowed_tools:
        data["allowed-tools"] = allowed_tools
    return f"---\n{_dump(data)}---\n\n{body.lstrip(chr(10))}"
