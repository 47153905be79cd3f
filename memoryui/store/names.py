"""Name rules: every hostile name is refused here, before any file is touched."""

from __future__ import annotations

import datetime as _dt
import re
import unicodedata

from .errors import InvalidName, InvalidText

SCOPE_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
SKILL_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
MAX_COMPONENT_BYTES = 200
MAX_PATH_CHARS = 1024


_ASCII_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


def _no_controls(value: str, what: str) -> None:
    if value.isascii():  # the usual name: one regex scan instead of a lookup per character
        found = _ASCII_CONTROL.search(value)
        if found is None:
            return
        raise InvalidName(f"{what} must not contain NUL bytes" if found.group() == "\x00"
                          else f"{what} must not contain control characters")
    for ch in value:
        if ch == "\x00":
            raise InvalidName(f"{what} must not contain NUL bytes")
        if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") and ch != "\t":
            raise InvalidName(f"{what} must not contain control characters")


def validate_scope(name: object) -> str:
    """Scope names follow Dagu's DAGName rule, widened to 64 characters."""
    if not isinstance(name, str) or not SCOPE_RE.match(name):
        raise InvalidName(
            f"invalid scope name {name!r}: use 1-64 letters, digits, '_' or '-'"
        )
    return name


def validate_date(value: object) -> str:
    if not isinstance(value, str) or not DATE_RE.match(value):
        raise InvalidName(f"invalid date {value!r} (expected YYYY-MM-DD)")
    try:
        _dt.date.fromisoformat(value)
    except ValueError as exc:
        raise InvalidName(f"invalid date {value!r}: {exc}") from None
    return value


def sanitize_world_topic(topic: object) -> str:
    """Duragent's `write_world` rule, but an empty topic is an error instead of `.md`."""
    if not isinstance(topic, str):
        raise InvalidName("topic must be a string")
    # Rust's `to_ascii_lowercase` leaves non-ASCII letters as they are.
    safe = "".join(
        (c.lower() if c.isascii() else c) if (c.isalnum() or c in "-_") else "-"
        for c in topic
    )
    if not safe:
        raise InvalidName("topic must not be empty")
    if len(safe.encode()) > MAX_COMPONENT_BYTES:
        raise InvalidName(f"topic is too long (at most {MAX_COMPONENT_BYTES} bytes)")
    return safe


def validate_world_topic(name: object) -> str:
    """A stored topic name must already be in sanitized form."""
    safe = sanitize_world_topic(name)
    if safe != name:
        raise InvalidName(f"invalid topic name {name!r}: use lowercase letters, digits, '-', '_'")
    return safe


def validate_note_name(name: object) -> str:
    """zerostack's `note_path` rule: trim, drop `.md` suffixes, no `/`, `\\` or `.`."""
    if not isinstance(name, str):
        raise InvalidName("invalid note name (no slashes or dots)")
    n = name.strip()
    while n.endswith(".md"):
        n = n[:-3]
    if not n or any(c in n for c in "/\\.") or n.startswith("-"):
        raise InvalidName("invalid note name (no slashes or dots)")
    _no_controls(n, "note name")
    if len(n.encode()) > MAX_COMPONENT_BYTES:
        raise InvalidName(f"note name is too long (at most {MAX_COMPONENT_BYTES} bytes)")
    return n


def validate_skill_name(name: object) -> str:
    """Agent Skills: lowercase alphanumerics and single hyphens, at most 64 characters."""
    if not isinstance(name, str) or not name:
        raise InvalidName("skill name must not be empty")
    if len(name) > 64:
        raise InvalidName("skill name must be at most 64 characters")
    if not SKILL_RE.match(name):
        raise InvalidName(
            f"invalid skill name {name!r}: lowercase letters, digits and single hyphens, "
            "not starting or ending with a hyphen"
        )
    return name


def validate_relpath(path: object, *, write: bool = False) -> str:
    """A workspace-relative path that cannot escape: no absolute, `..`, `\\`, NUL, dotfiles.

    With `write=True`, also the rule for names memoryui creates (see `writable_name`).
    """
    if not isinstance(path, str) or not path:
        raise InvalidName("path must not be empty")
    if len(path) > MAX_PATH_CHARS:
        raise InvalidName(f"path is too long (at most {MAX_PATH_CHARS} characters)")
    _no_controls(path, "path")
    if "\\" in path:
        raise InvalidName("path must use '/' separators, not '\\'")
    if path.startswith("/") or re.match(r"^[A-Za-z]:", path):
        raise InvalidName("path must be relative to the workspace")
    parts = path.split("/")
    for part in parts:
        if part in ("", ".", ".."):
            raise InvalidName(f"invalid path {path!r}: empty, '.' or '..' component")
        if part.startswith("."):
            raise InvalidName(f"invalid path {path!r}: hidden names are reserved")
        if len(part.encode()) > MAX_COMPONENT_BYTES:
            raise InvalidName(f"invalid path {path!r}: a component is too long")
        if part.strip() != part:
            raise InvalidName(f"invalid path {path!r}: leading or trailing spaces")
        if write:
            writable_name(part, path)
    return path


def writable_name(part: str, path: str = "") -> str:
    """The characters a file or folder name memoryui writes may hold.

    Printable Unicode (letters, digits, punctuation, symbols, plain spaces inside the
    name), except `"` and `\\`; no control or format characters (TAB, newline, NUL,
    bidi overrides), no lone surrogates; not starting with `.` or a space (a leading `-`
    stays allowed: Duragent's topic rule makes `../x` into `---x`, and every git call
    separates paths with `--`). These are the names git prints unquoted. Files
    made natively with other names are still listed, committed and discarded as pending
    changes; memoryui just never creates or rewrites them.
    """
    where = f"invalid path {path or part!r}"
    if part[:1] in (".", " "):
        raise InvalidName(f"{where}: a name must not start with '.' or a space")
    if part.isascii() and part.isprintable() and '"' not in part and "\\" not in part:
        return part
    for ch in part:
        if ch in '"\\':
            raise InvalidName(f"{where}: a name must not contain '\"' or '\\'")
        if ch != " " and not ch.isprintable():
            raise InvalidName(f"{where}: a name must use printable characters only "
                              f"(found U+{ord(ch):04X})")
    return part


def lookalike_key(name: str) -> str:
    """What a name is to a file system that folds case and Unicode forms (macOS, Windows):
    NFC, case-folded, NFC again. Two names with one key are one file in a clone there."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", name).casefold())


def validate_text(text: str, old: str | None = None) -> str:
    """Text memoryui stores: valid Unicode (no lone surrogates) without new NUL bytes.

    A NUL makes git treat the file as binary (no diffs, no blame); a lone surrogate
    cannot be written as UTF-8. A file that already held NULs (written natively) can
    still be appended to, as long as no NUL is added.
    """
    if "\x00" in text and text.count("\x00") > (old or "").count("\x00"):
        at = _line_of(text, text.rindex("\x00"))
        raise InvalidText(f"the text contains a NUL byte (\\x00) on line {at}: memory files "
                          "are plain text")
    try:
        text.encode()
    except UnicodeEncodeError as exc:
        raise InvalidText(f"the text is not valid Unicode: a lone surrogate "
                          f"U+{ord(text[exc.start]):04X} on line {_line_of(text, exc.start)}"
                          ) from None
    return text


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1
