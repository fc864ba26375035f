"""`studytui check` catches each source-policy rule on broken copies of the content."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from studytui.cli import main
from studytui.core.paths import content_dir

CONTENT = content_dir()
LOCATION = re.compile(r"^(?P<file>[^:]+\.yaml):(?P<line>\d+): ")


@pytest.fixture
def broken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    copy = tmp_path / "content"
    shutil.copytree(CONTENT, copy)
    # These tests break the guide, claims and profiles, never a practice problem: the problem
    # check (every problem over 12 seeds, two thirds of a check) is tested in test_practice.py
    # and by test_clean_content_passes.
    monkeypatch.setattr("studytui.study.check._practice_problems", lambda content_dir, guide: [])
    return copy


def _edit(path: Path, old: str, new: str, count: int = 1) -> int:
    """Replace text in a content file; returns the 1-based line of the first change."""
    text = path.read_text()
    assert old in text, f"fixture text not found in {path.name}: {old!r}"
    line = text[: text.index(old)].count("\n") + 1
    path.write_text(text.replace(old, new, count))
    return line


def _check(copy: Path, capsys) -> tuple[int, list[str]]:
    code = main(["--content", str(copy), "check"])
    out = capsys.readouterr().out.strip().splitlines()
    return code, out


def test_clean_content_passes(capsys):
    # The one run of the whole check on the shipped content: every try-it link runs its calculator,
    # every practice problem's variants agree with their hand formulas, the profile advice names
    # real entries (each of those checks has its own failing-content tests).
    code, out = _check(CONTENT, capsys)
    assert code == 0, out
    assert out[-1].startswith("ok:")


def _problem_lines(out: list[str]) -> list[str]:
    return [line for line in out if LOCATION.match(line)]


def test_http_url_rejected(broken, capsys):
    f = broken / "sections" / "01-gpu-fundamentals.yaml"
    line = _edit(f, "https://docs.nvidia.com/cuda/cuda-programming-guide/'", "http://docs.nvidia.com/cuda/cuda-programming-guide/'")
    code, out = _check(broken, capsys)
    assert code == 1
    probs = _problem_lines(out)
    assert any("must be https" in p and f"01-gpu-fundamentals.yaml:{line}:" in p for p in probs), out


def test_unknown_kind_rejected(broken, capsys):
    f = broken / "sections" / "02-kernel-optimization.yaml"
    _edit(f, "kind: paper", "kind: tweet")
    code, out = _check(broken, capsys)
    assert code == 1 and any("unknown kind 'tweet'" in p for p in _problem_lines(out))


def test_duplicate_id_rejected(broken, capsys):
    f = broken / "sections" / "04-inference-engines.yaml"
    _edit(f, "id: kivi", "id: gqa")
    code, out = _check(broken, capsys)
    assert code == 1 and any("duplicate entry id 'gqa'" in p for p in _problem_lines(out))


def test_url_twice_in_subsection_rejected(broken, capsys):
    f = broken / "sections" / "04-inference-engines.yaml"
    text = f.read_text()
    kivi_url = re.search(r"id: kivi\n(?:.*\n)*?\s+url: '?([^'\n]+)'?", text).group(1)
    gqa_url = re.search(r"id: gqa\n(?:.*\n)*?\s+url: '?([^'\n]+)'?", text).group(1)
    _edit(f, kivi_url, gqa_url)
    code, out = _check(broken, capsys)
    assert code == 1 and any("URL listed twice in this subsection" in p for p in _problem_lines(out))


def test_same_url_across_sections_allowed(capsys):
    from studytui.guide import load_guide

    guide = load_guide()
    urls = [e.url for e in guide.entries if e.url]
    assert len(urls) != len(set(urls)), "the guide repeats some URLs across sections on purpose"


def test_frontier_entry_without_date_rejected(broken, capsys):
    f = broken / "sections" / "07-frontier.yaml"
    text = f.read_text()
    m = re.search(r"\n(\s+)date: '?2026-08-23'?\n", text)
    f.write_text(text[: m.start()] + "\n" + text[m.end():])
    code, out = _check(broken, capsys)
    assert code == 1 and any("Frontier entries must carry a 'date'" in p for p in _problem_lines(out))


def test_frontier_section_without_verified_date_rejected(broken, capsys):
    f = broken / "sections" / "07-frontier.yaml"
    text = f.read_text()
    f.write_text(re.sub(r"(?m)^verified_on:.*$", "verified_on: null", text))
    code, out = _check(broken, capsys)
    assert code == 1 and any("must carry 'verified_on'" in p for p in _problem_lines(out))


def test_watchlist_without_url_must_say_why(broken, capsys):
    f = broken / "sections" / "07-frontier.yaml"
    text = f.read_text()
    f.write_text(re.sub(r"(?m)^(\s+)no_url_reason:.*(\n\s{10,}\S.*)*$", "", text, count=1))
    code, out = _check(broken, capsys)
    assert code == 1 and any("no_url_reason" in p for p in _problem_lines(out)), out


def test_core_entry_without_url_rejected(broken, capsys):
    f = broken / "sections" / "02-kernel-optimization.yaml"
    text = f.read_text()
    f.write_text(re.sub(r"(?m)^(\s+)url: .*$", r"\1url: null", text, count=1))
    code, out = _check(broken, capsys)
    assert code == 1 and any("only watchlist items may have no URL" in p for p in _problem_lines(out))


CLAIM_OK = (
    "        claims:\n"
    "          - value: '1.2x faster'\n"
    "            hardware: 'one H100 SXM'\n"
    "            workload: 'GEMM 8192^3'\n"
    "            precision: bf16\n"
    "            baseline: cuBLAS 12.4\n"
    "            correctness: 'max abs error vs fp32 reference'\n"
    "            software: 'CUDA 12.4, driver 550'\n"
    "            algorithm: 'warp-specialized persistent GEMM, 128x256 tiles'\n"
)


def _add_claim(f: Path, claim: str) -> None:
    text = f.read_text()
    m = re.search(r"(?m)^(\s+)summary: >-\n", text)
    f.write_text(text[: m.start()] + claim + text[m.start():])


def test_claim_with_all_fields_admitted(broken, capsys):
    _add_claim(broken / "sections" / "02-kernel-optimization.yaml", CLAIM_OK)
    code, out = _check(broken, capsys)
    assert code == 0, out


@pytest.mark.parametrize("field", ["hardware", "workload", "precision", "baseline", "correctness", "software", "algorithm"])
def test_claim_missing_a_field_rejected(broken, capsys, field):
    claim = "\n".join(ln for ln in CLAIM_OK.splitlines() if not ln.strip().startswith(field + ":")) + "\n"
    _add_claim(broken / "sections" / "02-kernel-optimization.yaml", claim)
    code, out = _check(broken, capsys)
    probs = _problem_lines(out)
    assert code == 1 and any("performance claim rejected" in p and field in p for p in probs), out


def test_broken_yaml_reports_file_and_line(broken, capsys):
    f = broken / "sections" / "03-programming-models.yaml"
    lines = f.read_text().splitlines()
    lines[5] = lines[5] + " : : ["
    f.write_text("\n".join(lines) + "\n")
    code, out = _check(broken, capsys)
    assert code == 1
    assert any(p.startswith(f"{f.as_posix()}:") or "03-programming-models.yaml:" in p for p in _problem_lines(out))
    assert any("invalid YAML" in p for p in out)


def test_unknown_field_is_a_typo(broken, capsys):
    _edit(broken / "sections" / "01-gpu-fundamentals.yaml", "summary: >-", "sumary: >-")
    code, out = _check(broken, capsys)
    assert code == 1 and any("unknown entry field 'sumary'" in p for p in _problem_lines(out))


def test_every_problem_listed_not_just_first(broken, capsys):
    _edit(broken / "sections" / "02-kernel-optimization.yaml", "kind: paper", "kind: tweet")
    _edit(broken / "sections" / "05-distributed-inference.yaml", "url: https://", "url: ftp://")
    code, out = _check(broken, capsys)
    assert code == 1 and len(_problem_lines(out)) >= 2


def test_check_never_tracebacks_on_garbage(tmp_path):
    bad = tmp_path / "c"
    (bad / "sections").mkdir(parents=True)
    (bad / "guide.yaml").write_bytes(b"\xff\xfe\x00garbage")
    proc = subprocess.run([sys.executable, "-m", "studytui.cli", "--content", str(bad), "check"],
                          capture_output=True, text=True)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr + proc.stdout
    assert "guide.yaml:1:" in proc.stdout


def test_missing_content_dir_is_usage_error(tmp_path, capsys):
    assert main(["--content", str(tmp_path / "nope"), "check"]) == 2
    assert "content directory not found" in capsys.readouterr().err


@pytest.mark.parametrize("field", ["hardware", "baseline", "correctness"])
def test_measured_profile_missing_a_field_rejected(broken, capsys, field):
    f = broken / "hardware" / "measured" / "h200-sxm.yaml"
    lines = f.read_text().splitlines()
    start = next(i for i, ln in enumerate(lines) if ln == f"  {field}:")
    end = start + 1
    while end < len(lines) and lines[end].startswith("    "):
        end += 1
    f.write_text("\n".join(lines[:start] + lines[end:]) + "\n")
    code, out = _check(broken, capsys)
    probs = _problem_lines(out)
    assert code == 1
    assert any("h200-sxm.yaml:" in p and field in p for p in probs), out


# -- provenance of entries added after the pinned README, and roles agreeing with the policy --

def test_later_entry_without_placement_rejected(broken, capsys):
    f = broken / "sections" / "02-kernel-optimization.yaml"
    _edit(f, "        placement: inferred   # from the 2026-10-17 update notes; position not confirmed\n", "")
    code, out = _check(broken, capsys)
    probs = _problem_lines(out)
    assert code == 1
    assert [p for p in probs if "'stream-k'" in p and "add 'placement: inferred'" in p], out
    assert any(p.startswith(f"{f.as_posix()}:") or "02-kernel-optimization.yaml:" in p for p in probs)


def test_placement_on_an_entry_read_in_the_pinned_readme_rejected(broken, capsys):
    _edit(broken / "sections" / "07-frontier.yaml", "      - id: kernelbench\n", "      - id: kernelbench\n        placement: inferred\n")
    code, out = _check(broken, capsys)
    assert code == 1 and any("'kernelbench'" in p and "needs a 'date' after" in p for p in _problem_lines(out)), out


def test_unknown_placement_value_rejected(broken, capsys):
    _edit(broken / "sections" / "02-kernel-optimization.yaml", "placement: inferred", "placement: guessed")
    code, out = _check(broken, capsys)
    assert code == 1 and any("'placement' must be one of inferred" in p for p in _problem_lines(out)), out


def test_guide_must_record_the_pinned_readme_date(broken, capsys):
    _edit(broken / "guide.yaml", "  commit_verified_on: '2026-08-23'\n", "")
    code, out = _check(broken, capsys)
    assert code == 1 and any("commit_verified_on" in p for p in _problem_lines(out)), out


def test_guide_must_say_what_was_read(broken, capsys):
    _edit(broken / "guide.yaml", "    - 'additions from the 2026-10-17 update notes (placement inferred; position not confirmed)'\n", "")
    code, out = _check(broken, capsys)
    assert code == 1 and any("'source.read' must say so" in p for p in _problem_lines(out)), out


def test_book_marked_core_rejected(broken, capsys):
    f = broken / "sections" / "00-start-here.yaml"
    text = f.read_text()
    start = text.index("- id: pmpp-book")
    f.write_text(text[:start] + text[start:].replace("        role: companion\n", "", 1))
    code, out = _check(broken, capsys)
    assert code == 1 and any("'pmpp-book'" in p and "cannot be core" in p for p in _problem_lines(out)), out


def test_role_not_described_in_the_policy_text_rejected(broken, capsys):
    _edit(broken / "policy.yaml", "**Companion**", "companion", count=2)
    code, out = _check(broken, capsys)
    assert code == 1 and any("role 'companion' is not described" in p for p in _problem_lines(out)), out


def test_role_missing_from_the_policy_rejected(broken, capsys):
    _edit(broken / "policy.yaml", "  - {id: companion, label: 'Companion'}\n", "")
    code, out = _check(broken, capsys)
    assert code == 1 and any("role 'companion' is not described in policy.yaml" in p for p in _problem_lines(out)), out


def test_claim_fields_must_include_software_and_algorithm(broken, capsys):
    _edit(broken / "policy.yaml", ", software, algorithm]", "]")
    code, out = _check(broken, capsys)
    assert code == 1 and any("claim_fields must be exactly" in p for p in _problem_lines(out)), out


def test_a_try_it_link_that_opens_on_an_error_is_reported(broken, capsys):
    # The app's form would open this link with an error instead of results: `check` runs every
    # link through the calculator (tests/tui/test_calc_screens.py opens one for real).
    path = broken / "sections" / "00-start-here.yaml"
    _edit(path, "args: {flops: '1e12', bytes: '4GB'}", "args: {flops: '1e12', bytes: '-4GB'}")
    code, out = _check(broken, capsys)
    assert code == 1
    hits = [o for o in out if "try_it opens 'roofline' on an error" in o]
    assert hits and LOCATION.match(hits[0]) and "00-start-here.yaml" in hits[0]


def test_a_try_it_argument_the_calculator_ignores_is_reported(broken, capsys):
    path = broken / "sections" / "00-start-here.yaml"
    _edit(path, "phase: 'prefill', batch: '1', prompt: '1024'}", "phase: 'prefill', batch: '1', prompt: '1024', context: '4096'}")
    code, out = _check(broken, capsys)
    hits = [o for o in out if "which 'transformer' ignores" in o]
    assert code == 1 and hits, out
