"""What the practice tests share: a good problem to break one way at a time, and a content copy
that holds just that problem file."""

from __future__ import annotations

import shutil
from pathlib import Path

CONTENT = Path(__file__).resolve().parent.parent / "content"

GOOD_PROBLEM = """\
section: start-here
problems:
  - id: t-ridge
    title: Ridge
    entries: [roofline-paper]
    params:
      gpu: [h100, h200]
    question: Ridge point of the {gpu}?
    calc: {name: roofline, args: {gpu: '{gpu}', intensity: 1}, answer: ridge_point}
    unit: FLOP/B
    notice: Peaks over bandwidth.
    skill: ridge-point
    given:
      - {gpu: '{gpu}', figures: [peak_bf16, hbm_bw]}
    by_hand: 'peak_bf16 / hbm_bw'
"""


def content_with_problem(tmp_path: Path, problem_yaml: str) -> Path:
    """A copy of the shipped content whose only problem file is `problem_yaml`."""
    root = tmp_path / "content"
    shutil.copytree(CONTENT, root, ignore=shutil.ignore_patterns("problems"))
    (root / "problems").mkdir()
    (root / "problems" / "00-test.yaml").write_text(problem_yaml, encoding="utf-8")
    return root
