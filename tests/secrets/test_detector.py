"""The detector: kinds found line by line, values masked, pragmas, only added lines."""

from __future__ import annotations

import pytest

from memoryui.secrets import added_lines, detector, redact, scan_lines, scan_text
from memoryui.secrets.detector import digest
from memoryui.secrets.guard import refusal
from tests.secrets.samples import AWS, GITHUB, JWT, STRIPE, URL, URL_PASSWORD

NOTE = f"""# Deploy notes

- the CI key is {AWS} for now
- token {GITHUB} (rotate!)
- remote {URL}
- stripe {STRIPE}
- session {JWT}
-----BEGIN RSA PRIVATE KEY-----
MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn
-----END RSA PRIVATE KEY-----
"""


def test_each_kind_is_found_on_its_line() -> None:
    found = [(f.kind, f.line) for f in scan_text(NOTE)]
    assert found == [("AWS Access Key", 3), ("GitHub Token", 4), ("Basic Auth Credentials", 5),
                     ("Stripe Access Key", 6), ("JSON Web Token", 7), ("Private Key", 8)]


def test_the_refusal_names_kind_and_line_never_the_value() -> None:
    found = scan_text(NOTE)
    text = refusal(found)
    assert text == ("Refused: the text contains a secret (AWS Access Key) on line 3 and 5 more. "
                    "Nothing was written.")
    for value in (AWS, GITHUB, URL_PASSWORD, STRIPE, JWT):
        assert value not in text and value not in repr(found)
    assert found[0].digest == digest(AWS)


@pytest.mark.parametrize("pragma", ["# memoryui: allow-secret", "<!-- pragma: allowlist secret -->"])
def test_a_pragma_line_is_not_a_finding(pragma: str) -> None:
    assert scan_text(f"example key {AWS} {pragma}\n") == []
    assert [f.kind for f in scan_text(f"example key {AWS}\n")] == ["AWS Access Key"]


def test_an_allowed_digest_is_not_a_finding() -> None:
    assert scan_text(f"{AWS}\n{STRIPE}\n", allowed={digest(AWS)})[0].kind == "Stripe Access Key"


def test_ordinary_prose_is_clean() -> None:
    prose = ("Deployed api v2.3 to production; canary at 5% for 20 minutes.\n"
             "Password reset emails were going to spam; rotated the SMTP relay.\n"
             "sha 3f2a9c1e0b7d4a6f8e2c1b0a9d8e7f6a5b4c3d2e, db-4 at 10.0.3.17, id 0xDEADBEEF\n"
             "token budget: 32 KiB; see https://example.com/docs?key=value\n")
    assert scan_text(prose) == []


@pytest.mark.parametrize("value", [AWS, GITHUB, STRIPE, URL, JWT,
                                   "-----BEGIN OPENSSH PRIVATE KEY-----"])
@pytest.mark.parametrize("around", ["{}", "  - seen in the logs: {} (rotated)", "{}\tand more",
                                    "[link](https://x.example/?k={})"])
def test_the_quick_check_never_hides_what_the_plugins_find(value: str, around: str) -> None:
    """Lines no plugin pattern matches skip the plugins; a secret in any context is still
    found (each kind the plugins find in the line, the same with the check as without)."""
    line = around.format(value)
    by_plugins = {kind for kind, _ in detector._values(line)}
    assert by_plugins and detector._suspect(line)
    assert {f.kind for f in scan_lines([(1, line)])} == by_plugins


def test_only_the_lines_a_write_adds_are_scanned() -> None:
    old = f"# log\n- key {AWS}\n- ok"
    appended = old + f" then more\n- new {STRIPE}\n"
    assert added_lines(old, appended) == [(3, "- ok then more"), (4, f"- new {STRIPE}")]
    assert [(f.kind, f.line) for f in scan_lines(added_lines(old, appended))] == [
        ("Stripe Access Key", 4)]
    edited = "# log, edited\n" + old.split("\n", 1)[1]
    assert scan_lines(added_lines(old, edited)) == []  # the old secret is not re-reported
    assert added_lines(None, "a\nb\n") == [(1, "a"), (2, "b")]


def test_redact_replaces_the_values_and_keeps_everything_else() -> None:
    lines = [f.line for f in scan_text(NOTE)]
    out = redact(NOTE, lines)
    assert scan_text(out) == []
    for value in (AWS, GITHUB, URL_PASSWORD, STRIPE, JWT, "MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn"):
        assert value not in out
    assert "- the CI key is [REDACTED] for now" in out
    assert "https://deploy:[REDACTED]@git.example.com/ops.git" in out
    assert out.count("\n") == NOTE.count("\n") and out.startswith("# Deploy notes\n\n")


def test_no_finding_in_the_demo_workspace(tmp_path) -> None:
    from memoryui.demo import build_demo

    store = build_demo(tmp_path / "demo")
    try:
        texts = [(p, store.read(p) or "") for p in store.list_files()]
        assert len(texts) > 30
        assert [(p, f.kind) for p, t in texts for f in scan_text(t)] == []
        assert store.secrets.flagged() == {}
    finally:
        store.close()
