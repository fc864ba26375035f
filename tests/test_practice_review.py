"""Issue 31, the teacher review of what a learner sees (question, given, hints, solution):

- T4: a percentage rounded to the places typed counts, and a refusal never reads as within the
  tolerance it is refused by;
- T5: a miss names the slip that fits the problem (the 2:4 sparse peak on a ridge point);
- T6: the worked solution is the problem's hand formula with its numbers, never the calculator's
  steps on placeholder inputs;
- T7: hw-faster-decode counts the KV cache the question states, and the cache changes the answer;
- T8: hw-scale-up-all-reduce states the mesh assumption the calculator makes and is not won by
  "pick the newest chip";
- T11: `practice show --json` leaves out the key until the variant is answered right or revealed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from studytui.calc.forms import run
from studytui.calc.hardware import load_catalog
from studytui.guide import load_guide
from studytui.practice import byhand
from studytui.practice.answers import answer_line, format_value, rounds_to
from studytui.practice.check import check_problems
from studytui.practice.given import facts
from studytui.practice.grading import Expected, Grade, expected, grade, miss_text, solution, variant_slips, within
from studytui.practice.loader import load_problems
from studytui.practice.model import Variant
from tests.practice_support import GOOD_PROBLEM, content_with_problem

CONTENT = Path(__file__).resolve().parent.parent / "content"
PROBLEMS = load_problems(CONTENT)
BY_ID = {p.id: p for p in PROBLEMS.problems}


def _all_variants(p):
    return [Variant(p, 0, values) for values in p.all_values()]


# ---- T4: percentages rounded as typed; a refusal never reads as within its tolerance -----------

def test_a_percentage_rounded_to_the_places_typed_counts():
    p = BY_ID["gf-last-wave"]
    small = p.variant(0)  # 4 tiles of 132: 3.03%
    assert expected(small).value == pytest.approx(4 / 132)
    for typed in ("3 %", "3%", "3", "3.0", "3.03"):
        assert grade(small, typed).correct, typed
    assert rounds_to("3 %", 0.03, 4 / 132, "%")  # by the rounding rule, not only the 1% tolerance
    for typed in ("3.1", "3.5", "2", "4", "0.03"):
        assert not grade(small, typed).correct, typed
    two_figures = p.variant(16)  # 16 tiles of 132: 12.12%
    assert expected(two_figures).value == pytest.approx(16 / 132)
    assert grade(two_figures, "12 %").correct and grade(two_figures, "12.1").correct
    assert not grade(two_figures, "10").correct and not grade(two_figures, "12.3").correct


@pytest.mark.parametrize(
    "typed,value,key,unit,right",
    [
        ("12", 0.12, 0.1212, "%", True), ("12.1%", 0.121, 0.1212, "%", True), ("3", 0.03, 0.034, "%", True),
        ("10", 0.10, 0.1212, "%", False),  # a whole percent is the coarsest rounding: not one figure of 12
        ("12.0", 0.12, 0.1212, "%", False),  # the places typed are the places compared
        ("0", 0.0, 0.004, "%", False), ("0%", 0.0, 0.004, "%", False),  # rounding to nothing is no answer
        ("0.4", 0.004, 0.004, "%", True), ("1e1", 0.1, 0.1212, "%", False),
        ("12", 0.012, 0.01212, "ms", False),  # percentages only
    ],
)
def test_the_rounding_rule(typed, value, key, unit, right):
    assert rounds_to(typed, value, key, unit) is right


def _miss(given: float, want: float, unit: str, tolerance: float) -> str:
    g = Grade("p", 0, "x", False, Expected(value=want), given=given, relative_error=abs(given - want) / want, unit=unit)
    return miss_text(g, tolerance)


@pytest.mark.parametrize("tolerance", [0.001, 0.01, 0.02, 0.03, 0.05, 0.08])
@pytest.mark.parametrize("over", [1.00001, 1.0004, 1.0011, 1.004, 1.04, 1.3])
@pytest.mark.parametrize("unit", ["ms", "%", "x"])
def test_a_refusal_never_reads_as_within_its_tolerance(tolerance, over, unit):
    want = 0.0303 if unit == "%" else 12.0
    given = want * (1 - tolerance * over)
    if within(abs(given - want) / want, tolerance):
        return  # graded right: equal to the tolerance as printed (to 4 decimals of a percent)
    text = _miss(given, want, unit, tolerance)
    size = text.split(" (within")[0]
    shares = size.split("a miss of ")[-1]  # on a percentage question, the share after the points
    limit = re.search(r"within ([\d.]+)%", text)
    numbers = [float(x) for x in re.findall(r"([\d.]+)%", shares)]
    lower = [float(x) for x in re.findall(r"over ([\d.]+)%", shares) + re.findall(r"([\d.]+)% to", shares)]
    assert numbers and limit, text
    # The band's top is beyond the tolerance, and a stated lower bound is not inside it.
    assert max(numbers) > float(limit.group(1)) and all(x >= float(limit.group(1)) for x in lower), text
    if tolerance >= 0.05:
        assert "MiB and MB" not in text, text  # a 4.9% gap counts as right with 5%: never named as the slip


def test_the_cli_case_of_the_review(tmp_path, capsys):
    from studytui.cli import main

    assert main(["--data-dir", str(tmp_path), "practice", "answer", "gf-last-wave", "3 %", "--seed", "0"]) == 0
    assert capsys.readouterr().out.startswith("Correct")
    assert main(["--data-dir", str(tmp_path / "b"), "practice", "answer", "gf-last-wave", "3.5", "--seed", "0"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    # review R1: a band, not the exact miss (3.5 - 0.47 would be the key)
    assert "under 1 percentage point too high, a miss of 10% to 25% (within 1% of the answer counts" in out


def test_the_answer_line_states_a_small_tolerance_and_the_percent_rule():
    assert "within 0.1% counts" in answer_line("waves", 0.001) and "0%" not in answer_line("waves", 0.001)
    assert "rounded to the decimal places you give" in answer_line("%", 0.01)
    assert "within 5% counts" in answer_line("ms", 0.05)


# ---- T5: the slip that fits the problem ---------------------------------------------------------

def test_a_doubled_ridge_point_names_the_sparse_peak():
    v = BY_ID["sh-ridge-point"].variant(1)
    assert v.values["gpu"]["id"] == "a100-sxm-80gb" and expected(v).value == pytest.approx(312 / 2.039)
    text = miss_text(grade(v, "306"), v.problem.tolerance)
    assert "2:4 sparse peak" in text and "multiply-add" not in text and "bidirectional" not in text


RIDGE_AND_PEAK = ["sh-ridge-point", "hw-ridge-low-precision", "fr-new-chip-ridge", "gf-precision-peak", "pm-achieved-fraction",
                  "ie-prefill-ttft", "ie-int4-prefill", "ko-wave-quantized-time", "hw-fp4-gemm"]


@pytest.mark.parametrize("pid", RIDGE_AND_PEAK)
def test_peak_problems_name_the_sparse_or_vector_peak_slip(pid):
    """Where the answer scales with the peak, a miss by the sparse/dense (or vector/tensor) ratio of
    the catalog names that slip, for every variant whose GPU prints such a figure."""
    catalog = load_catalog()
    named = 0
    for v in _all_variants(BY_ID[pid]):
        peaks = [f for f in facts(v) if f.name.startswith("peak_")]
        (peak,) = peaks
        acc = catalog.get(_gpu_of(v))
        dtype = peak.name[len("peak_"):]
        key = "fp64_tensor" if dtype == "fp64" else dtype
        other = acc.peak_flops.get("fp64") if dtype == "fp64" else acc.peak_flops_sparse.get(key)
        if not other or other == peak.value:
            continue
        exp = expected(v).value
        factor = other / peak.value
        wrong = exp * factor if v.problem.answer_key == "ridge_point" else exp / factor
        text = miss_text(grade(v, format_value(wrong, v.problem.unit, 8)), v.problem.tolerance)
        assert ("vector-pipe" if dtype == "fp64" else "2:4 sparse") in text, (pid, v.values, text)
        named += 1
    assert named


def _gpu_of(v) -> str:
    from studytui.practice.model import render

    return render(next(g.ref for g in v.problem.given if g.source == "gpu"), v.values)


def test_a_slip_whose_gpu_prints_no_sparse_figure_does_not_apply():
    p = BY_ID["fr-new-chip-ridge"]
    tpu = next(v for v in _all_variants(p) if v.values["gpu"]["id"].startswith("tpu"))
    assert variant_slips(tpu) == ()
    other = next(v for v in _all_variants(p) if not v.values["gpu"]["id"].startswith("tpu"))
    assert variant_slips(other) and variant_slips(other)[0][0] == pytest.approx(2.0, rel=0.01)


GOOD = GOOD_PROBLEM + """\
    slips:
      - {factor: 'sparse_bf16 / peak_bf16', says: 'the sparse peak'}
"""


def test_check_rejects_a_slip_that_names_an_unknown_figure(tmp_path):
    def copy(name: str, text: str) -> Path:
        return content_with_problem(tmp_path / name, text)

    assert check_problems(copy("good", GOOD), None) == []
    found = check_problems(copy("bad", GOOD.replace("sparse_bf16 / peak_bf16", "sparse_fp8 / peak_bf16")), None)
    assert len(found) == 1 and "sparse_fp8" in found[0] and found[0].startswith("content/problems/00-test.yaml:17:"), found
    found = check_problems(copy("says", GOOD.replace("'the sparse peak'", "'the {dtype} peak'")), None)
    assert len(found) == 1 and "'{dtype}' names no parameter" in found[0], found


# ---- T6: the solution is the hand formula, with numbers -----------------------------------------

@pytest.mark.parametrize("pid", sorted(BY_ID))
def test_the_solution_is_the_hand_formula_not_the_calculators_placeholder_steps(pid):
    p = BY_ID[pid]
    for seed in (0, 1, 2):
        v = p.variant(seed)
        exp = expected(v)
        lines = solution(v, exp)
        assert lines[0].startswith("By hand"), (pid, lines[:2])
        assert not set(exp.explain) & set(lines), (pid, set(exp.explain) & set(lines))
        assert lines[-1] == v.notice and lines[-2] == ""
        steps = lines[1:-2]
        assert steps and all("{" not in line for line in steps), (pid, steps)
        hand = byhand.evaluate(v)
        if p.kind == "number":
            (answer,) = [line for line in steps if line.startswith("answer = ")]
            assert answer.endswith(f" -> {format_value(hand.value, p.unit)}"), answer
        else:
            assert steps[-1].endswith(f": {exp.choice}"), (pid, steps[-1])


@pytest.mark.parametrize(
    "pid,seed,absent",
    [
        ("gf-hbm-stream", 0, ("intensity", "ridge", "compute time", " ns", "attainable", "link byte", "1.563e-11")),
        ("sh-ridge-point", 1, ("attainable", "FLOPs per link byte", "1040", "intensity = FLOPs")),
        ("gf-last-wave", 0, ("FLOPs", "bytes", "intensity")),
    ],
)
def test_the_solutions_the_review_named(pid, seed, absent):
    v = BY_ID[pid].variant(seed)
    text = "\n".join(solution(v, expected(v)))
    for word in absent:
        assert word not in text, (pid, word, text)
    if pid == "gf-hbm-stream":
        assert "answer = 64GB / hbm_bw = 64GB / 5.3e+12 = 0.01208 -> 12.08 ms" in text
    if pid == "gf-last-wave":
        assert "tiles = ceil(8192 / 128) * ceil(8192 / 128) = 4096" in text and "-> 3.03%" in text


# ---- T7: hw-faster-decode counts the KV cache it states -----------------------------------------

def test_faster_decode_counts_the_kv_cache_and_the_cache_changes_the_answer():
    p = BY_ID["hw-faster-decode"]
    assert "KV cache" in p.question and "90%" in p.question and "embedding" in p.question
    let = p.by_hand["let"]
    assert "kv_heads" in let and "embedding" in let and "hidden" in let  # the cache, rows gathered
    catalog = load_catalog()
    answers = {}
    by_bandwidth = by_capacity = 0
    variants = _all_variants(p)
    for v in variants:
        exp = expected(v)
        case = v.values["case"]
        chips = [case[k] for k in "abc"]
        assert sum(1 for c in exp.per_choice.values() if c > 0) >= 1
        by_bandwidth += exp.choice == max(chips, key=lambda c: catalog.get(c).mem_bw)
        by_capacity += exp.choice == max(chips, key=lambda c: catalog.get(c).memory_bytes)
        answers.setdefault(tuple(chips), set()).add(exp.choice)
    # "the highest bandwidth" and "the most memory" each lose in some variants, and for some
    # trios the batch and context (the KV cache) change which chip wins.
    assert by_bandwidth < len(variants) and by_capacity < len(variants)
    assert sum(1 for won in answers.values() if len(won) > 1) >= 3


# ---- T8: hw-scale-up-all-reduce -----------------------------------------------------------------

def test_scale_up_all_reduce_is_not_won_by_the_newest_chip():
    p = BY_ID["hw-scale-up-all-reduce"]
    catalog = load_catalog()
    newest = 0
    variants = _all_variants(p)
    for v in variants:
        chips = [v.values["trio"][k] for k in "abc"]
        top = max(int(catalog.get(c).raw["year"]) for c in chips)
        winner = expected(v).choice
        newest += int(catalog.get(winner).raw["year"]) == top
    assert newest <= 0.65 * len(variants), f"the newest chip wins {newest} of {len(variants)}"
    assert newest < len(variants) - 2  # an older chip wins several


def test_scale_up_all_reduce_states_the_calculators_mesh_assumption():
    p = BY_ID["hw-scale-up-all-reduce"]
    v = next(v for v in _all_variants(p) if "mi355x" in v.values["trio"].values())
    assert "several rings" in v.question and "7 peers" in v.question and "one ring would use only" in v.question
    link = next(f for f in facts(v) if f.text.startswith("AMD Instinct MI355X"))
    assert "76.8 GB/s each way per peer" in link.text and "537.5 GB/s each way" in link.text
    # The calculator makes the same assumption (if it changes, this question must too).
    result = run("collective", {"op": "all_reduce", "gpus": "8", "bytes": "1GiB", "gpu": "mi355x", "latency": "1us",
                                "algorithm": "ring"})
    assert any("rings are assumed to spread over all of those links" in a for a in result.assumptions)
    assert result.values["link_bw_per_direction"] == pytest.approx(537.5e9)


# ---- T11: show --json keeps the key out until the variant is settled ----------------------------

def _numbers(obj, skip=("given",)):
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k not in skip:
                yield from _numbers(v, skip)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _numbers(v, skip)
    elif isinstance(obj, (int, float)) and not isinstance(obj, bool):
        yield float(obj)


def test_show_json_hides_the_key_until_answered_or_revealed(tmp_path):
    from studytui.practice.service import Practice
    from studytui.store import open_store

    with open_store(tmp_path / "s.db") as store:
        practice = Practice(load_guide(CONTENT), store, PROBLEMS)
        pid = "sh-ridge-point"
        before = practice.show_json(pid)
        key = expected(PROBLEMS.get(pid).variant(before["seed"])).value
        assert before["answer_hidden"] and before["by_hand"]["value"] is None and before["by_hand"]["expression"]
        assert before["given"] and before["calc"]["name"] == "roofline"
        assert all(abs(x - key) > 1e-6 * key for x in _numbers(before)), "the key is in show --json"
        practice.answer(pid, f"{key!r}", seed=before["seed"])
        after = practice.show_json(pid, seed=before["seed"])  # the answered variant, by its seed
        assert not after["answer_hidden"] and after["by_hand"]["value"] == pytest.approx(key)
        assert practice.show_json(pid)["answer_hidden"]  # the next variant is new: hidden again

        choice = "hw-scale-up-all-reduce"
        shown = practice.show_json(choice)
        assert shown["by_hand"]["value"] is None and shown["by_hand"]["per_choice"] is None
        practice.reveal(choice)  # the solution shown spends the variant: its key may be shown now
        spent = practice.show_json(choice, seed=shown["seed"])
        assert spent["by_hand"]["value"] == expected(PROBLEMS.get(choice).variant(shown["seed"])).choice
        assert spent["by_hand"]["per_choice"]
