"""The layering rules of DESIGN.md section 6, checked on the source: the domain packages
(store, search, review) import no Django, and nothing outside web/ imports web/."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "memoryui"
DOMAIN = ["store", "search", "review", "secrets"]
# Thin ORM adapters a domain package may keep (each says so in its docstring): the review
# state lives in Django models, so reading and writing it is one module; the rest is plain.
DJANGO_ADAPTERS = {"memoryui/review/state.py"}


def modules(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


def imported(path: Path) -> Iterator[tuple[int, str]]:
    """(line, absolute module name) of every import in a file, relative ones resolved."""
    package = ".".join(path.relative_to(PACKAGE.parent).parent.parts)
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            yield node.lineno, name
            for alias in node.names:  # `from memoryui import web`
                yield node.lineno, f"{name}.{alias.name}"


def test_the_store_has_no_adapter_exception() -> None:
    assert not any(a.startswith("memoryui/store/") for a in DJANGO_ADAPTERS)


def test_the_import_parser_sees_what_it_must() -> None:
    store_init = PACKAGE / "store" / "__init__.py"
    names = {name for _line, name in imported(store_init)}
    assert "memoryui.store.workspace" in names and "memoryui.store.budgets.cut" in names
    tools = {name for _line, name in imported(PACKAGE / "tools" / "zerostack.py")}
    assert "memoryui.store.budgets" in tools
    staging = {name for _line, name in imported(PACKAGE / "store" / "staging.py")}
    assert {"pygit2", "memoryui.store.walk", "memoryui.store.errors.InvalidName"} <= staging


@pytest.mark.parametrize("package", DOMAIN)
def test_domain_packages_do_not_import_django(package: str) -> None:
    folder = PACKAGE / package
    if not folder.is_dir():
        pytest.skip(f"memoryui/{package}/ does not exist yet")
    offenders = [f"{path.relative_to(PACKAGE.parent)}:{line} imports {name}"
                 for path in modules(folder)
                 if str(path.relative_to(PACKAGE.parent)) not in DJANGO_ADAPTERS
                 for line, name in imported(path)
                 if name == "django" or name.startswith("django.")
                 or name.startswith("memoryui.web") or name in ("memoryui.models",
                                                                "memoryui.workspace")]
    assert offenders == [], "the domain must stay plain Python:\n" + "\n".join(offenders)


def test_nothing_outside_web_imports_web() -> None:
    web = PACKAGE / "web"
    offenders = [f"{path.relative_to(PACKAGE.parent)}:{line} imports {name}"
                 for path in modules(PACKAGE) if web not in path.parents
                 for line, name in imported(path)
                 if name == "memoryui.web" or name.startswith("memoryui.web.")]
    assert offenders == [], "lower layers must not import web/:\n" + "\n".join(offenders)
