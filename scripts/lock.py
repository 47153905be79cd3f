"""Print requirements.lock: memoryui's runtime dependencies (pyproject `dependencies` plus
the `postgres` extra) and everything they pull in, pinned to the versions installed here.

Run it in the environment the tests pass in: `python3 scripts/lock.py > requirements.lock`.
Markers are evaluated for this interpreter and platform (the image's Python 3.11 on Linux).
"""

from __future__ import annotations

import importlib.metadata as md
import sys
import tomllib
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
HEADER = """\
# Pinned runtime dependencies of memoryui: pyproject.toml's dependencies and the postgres
# extra, with everything they pull in, at the versions the test suite passed with. The
# Docker image installs exactly these, then memoryui itself with --no-deps, then `pip check`.
# Regenerate after changing dependencies: python3 scripts/lock.py > requirements.lock
"""


def roots() -> list[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return [*project["dependencies"], *project["optional-dependencies"]["postgres"]]


def closure(requirements: list[str]) -> dict[str, str]:
    """name -> installed version for the requirements and their dependencies."""
    env = default_environment()
    found: dict[str, tuple[str, set[str]]] = {}
    todo = [Requirement(r) for r in requirements]
    while todo:
        req = todo.pop()
        name = canonicalize_name(req.name)
        try:
            dist = md.distribution(req.name)
        except md.PackageNotFoundError:
            sys.exit(f"{req.name} is not installed: pip install -e '.[postgres]' first")
        version, extras = found.get(name, (dist.version, set()))
        if name in found and set(req.extras) <= extras:
            continue
        if not req.specifier.contains(version, prereleases=True):
            sys.exit(f"installed {req.name} {version} does not satisfy {req}")
        extras = extras | set(req.extras)
        found[name] = (version, extras)
        for dep in map(Requirement, dist.requires or []):
            if dep.marker and not any(dep.marker.evaluate({**env, "extra": x})
                                      for x in extras | {""}):
                continue
            todo.append(dep)
    return {name: version for name, (version, _) in found.items()}


def main() -> None:
    pins = closure(roots())
    sys.stdout.write(HEADER + "".join(f"{n}=={v}\n" for n, v in sorted(pins.items())))


if __name__ == "__main__":
    main()
