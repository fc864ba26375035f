"""Speculative decoding (Leviathan et al., arXiv 2211.17192): expected tokens, speedup, cost.

alpha: expected acceptance rate of a draft token; gamma: draft tokens per target call;
c: draft/target walltime ratio per call; c_hat: draft/target arithmetic-operations ratio.
"""

from __future__ import annotations

from typing import Any

from studytui.calc.forms import CalcSpec, DataDir, FieldSpec
from studytui.calc.result import Result
from studytui.calc.units import FieldError

MAX_GAMMA = 64


def g(x: float) -> str:
    return f"{x:.4g}"


def expected_tokens(alpha: float, gamma: int) -> float:
    """(1 - a^(g+1)) / (1 - a); the limit g + 1 as a -> 1."""
    if alpha >= 1.0:
        return float(gamma + 1)
    return (1 - alpha ** (gamma + 1)) / (1 - alpha)


def speedup(alpha: float, gamma: int, cost_ratio: float) -> float:
    return expected_tokens(alpha, gamma) / (gamma * cost_ratio + 1)


def ops_factor(alpha: float, gamma: int, op_cost_ratio: float) -> float:
    return (gamma * op_cost_ratio + gamma + 1) / expected_tokens(alpha, gamma)


def best_gamma(alpha: float, cost_ratio: float, limit: int = MAX_GAMMA) -> tuple[int, float]:
    """The gamma in 1..limit with the highest walltime speedup (ties: the smaller gamma)."""
    best = (1, speedup(alpha, 1, cost_ratio))
    for gamma in range(2, limit + 1):
        s = speedup(alpha, gamma, cost_ratio)
        if s > best[1] * (1 + 1e-12):
            best = (gamma, s)
    return best


def speedup_limit(alpha: float, cost_ratio: float) -> float:
    """The speedup as gamma grows without end: 1/(1-a) for a free draft, 1/c when every token is accepted."""
    if alpha < 1:
        return 1 / (1 - alpha) if cost_ratio == 0 else 0.0
    return float("inf") if cost_ratio == 0 else 1 / cost_ratio


def specdec(alpha: float, gamma: int, cost_ratio: float = 0.0, op_cost_ratio: float | None = None) -> Result:
    if not 0 <= alpha <= 1:
        raise FieldError("alpha", f"must be in [0, 1] (got {alpha:g})")
    if gamma < 1:
        raise FieldError("gamma", f"must be at least 1 (got {gamma})")
    if cost_ratio < 0:
        raise FieldError("cost_ratio", "must be zero or more")
    c_hat = cost_ratio if op_cost_ratio is None else op_cost_ratio
    result = Result("specdec")
    tokens = expected_tokens(alpha, gamma)
    s = speedup(alpha, gamma, cost_ratio)
    ops = ops_factor(alpha, gamma, c_hat)
    gamma_best, s_best = best_gamma(alpha, cost_ratio)
    # Still improving at the search cap: there is no best gamma to name within it.
    capped = gamma_best == MAX_GAMMA and speedup(alpha, MAX_GAMMA, cost_ratio) > speedup(alpha, MAX_GAMMA - 1, cost_ratio) * (1 + 1e-12)
    limit = speedup_limit(alpha, cost_ratio)
    result.values.update(
        alpha=alpha, gamma=gamma, cost_ratio=cost_ratio, op_cost_ratio=c_hat,
        expected_tokens_per_step=tokens, speedup=s, ops_factor=ops,
        best_gamma=None if capped else gamma_best, best_speedup=s_best, best_gamma_capped=capped, time_s=None,
    )
    if capped and limit > 0 and limit != float("inf"):
        result.values["speedup_limit"] = limit
    a, gm, c = alpha, gamma, cost_ratio
    if alpha < 1:
        result.step(f"E[tokens per target call] = (1 - a^(g+1)) / (1 - a) = (1 - {g(a)}^{gm + 1}) / (1 - {g(a)}) = {g(tokens)}")
    else:
        result.step(f"E[tokens per target call] = g + 1 = {gm + 1} (every draft token accepted)")
    result.step(f"walltime speedup = E / (g c + 1) = {g(tokens)} / ({gm} x {g(c)} + 1) = {g(s)}")
    result.step(f"operations factor = (g c_hat + g + 1) / E = ({gm} x {g(c_hat)} + {gm} + 1) / {g(tokens)} = {g(ops)}")
    if capped:
        if limit == float("inf"):
            towards = "without limit (every draft token accepted and the draft free: g + 1 tokens per step)"
        elif alpha >= 1:
            towards = f"towards 1/c = {g(limit)}"
        elif cost_ratio == 0:
            towards = f"towards 1/(1 - a) = {g(limit)}"
        else:
            towards = "past the search range"
        result.step(
            f"best gamma: none in 1..{MAX_GAMMA}: the speedup still rises at gamma {MAX_GAMMA} ({g(s_best)}) and keeps rising {towards}"
        )
    else:
        result.step(f"best gamma in 1..{MAX_GAMMA} for a = {g(a)}, c = {g(c)}: {gamma_best} (speedup {g(s_best)})")
    result.row("expected tokens per target step", g(tokens))
    result.row("walltime speedup", f"{g(s)}x")
    result.row("operations factor", f"{g(ops)}x the target-only arithmetic")
    if capped:
        result.row("best gamma", f"none: the speedup keeps rising with gamma ({g(s_best)}x at {MAX_GAMMA}"
                   + (f", limit {g(limit)}x)" if limit not in (0.0, float("inf")) else ")"))
    else:
        result.row("best gamma", f"{gamma_best} (speedup {g(s_best)}x)")
    if alpha > cost_ratio:
        floor = (1 + alpha) / (1 + cost_ratio)
        result.values["speedup_floor_at_best"] = floor
        result.step(f"a > c, so some gamma helps: best speedup >= (1 + a) / (1 + c) = {g(floor)}")
    else:
        result.warn(f"alpha ({g(alpha)}) <= cost ratio ({g(cost_ratio)}): no gamma gives a speedup")
    result.assume(
        "Leviathan et al.: acceptances i.i.d. with rate alpha; draft and target run one after the other; c = draft/target time per call"
    )
    if alpha == 0:
        result.assume("alpha = 0: no draft token is ever accepted, so each step yields 1 token and costs g c + 1: speedup 1/(g c + 1)")
    if cost_ratio == 0:
        result.assume(
            "c = 0: the draft is free (an upper bound on the speedup); the speedup then grows with gamma "
            + ("towards 1/(1 - alpha)" if alpha < 1 else "without limit")
        )
    return result


# ---- the calculator ------------------------------------------------------------------------

def _run(p: dict[str, Any], data_dir: DataDir) -> Result:
    return specdec(p["alpha"], p["gamma"], p["cost_ratio"], p["op_cost_ratio"])


SPEC = CalcSpec(
    "specdec", "Speculative decoding",
    "Leviathan et al.: expected tokens per target step, walltime speedup, operations factor, best gamma.",
    (
        FieldSpec("alpha", "acceptance rate", "float", "0.8", maximum=1.0, allow_zero=True, help="0 <= alpha <= 1"),
        FieldSpec("gamma", "draft tokens per step", "int", "4"),
        FieldSpec("cost_ratio", "draft/target time ratio c", "float", "0", allow_zero=True),
        FieldSpec("op_cost_ratio", "draft/target ops ratio", "float", allow_zero=True, help="default: the time ratio"),
    ),
    _run,
    # A free draft (the calculator's default c = 0) makes every gamma look good; start realistic.
    ui_defaults={"cost_ratio": "0.05"},
    headline=("expected tokens", "walltime speedup", "best gamma"),
    short_labels=((r"^expected tokens per target step$", "tokens per step"),),
)
