"""The one hand-off policy (studytui.core.handoff.check_link): https to a named host only, judged after
percent-decoding; never a local path or another scheme. Every path (entry URLs, note links,
glossary and policy links, the copy key) goes through it; tests/tui/test_handoff.py checks the
app's paths."""

from __future__ import annotations

import pytest

from studytui.core.handoff import check_link


@pytest.mark.parametrize(
    "target",
    [
        "https://arxiv.org/abs/2205.14135",
        "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#shared-memory",
        "HTTPS://Example.org/a%20b",
        "https://[2001:db8::1]/x",
        "  https://example.org/padded  ",
    ],
)
def test_https_links_are_handed_off(target):
    link = check_link(target)
    assert link.allowed, link.reason
    assert link.url.lower().startswith("https://")


@pytest.mark.parametrize(
    "target, why",
    [
        ("%66ile:///etc/passwd", "'file:'"),  # Textual decodes once; we decode again
        ("%2566ile:///etc/passwd", "'file:'"),  # encoded twice
        ("%6Aavascript:alert%281%29", "'javascript:'"),
        ("javascript:alert(1)", "'javascript:'"),
        ("JaVaScRiPt:alert(1)", "'javascript:'"),
        ("ssh://attacker.example/", "'ssh:'"),
        ("file:///home/learner/.ssh/id_rsa", "'file:'"),
        ("data:text/html,<script>", "'data:'"),
        ("vscode://file/etc/passwd", "'vscode:'"),
        ("/etc/passwd", "local path"),
        ("../secrets.md", "local path"),
        ("~/notes.md", "local path"),
        ("C:\\Windows\\system32", "local path"),
        ("http://example.org/", "plain http"),
        ("https:///etc/passwd", "no valid host"),
        ("https:example.org", "no valid host"),
        ("https://example.org/\x1b]52;c;AAAA\x07", "control characters"),
        ("https://exa\nmple.org/", "control characters"),
    ],
)
def test_everything_else_is_refused_with_a_reason(target, why):
    link = check_link(target)
    assert not link.allowed
    assert why in link.reason


def test_spaces_are_encoded_not_passed_to_the_opener():
    assert check_link("https://example.org/a b").url == "https://example.org/a%20b"
