"""Speculative decoding (Leviathan et al., arXiv 2211.17192): expected tokens, speedup, cost.

alpha: expected acceptance rate of a draft token; gamma: draft tokens per target call;
c: draft/target walltime ratio per call; c_hat: draft/target arithmetic-operations ratio.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from studytui.calc.dtypes import DEFAULT_DTYPE, DTYPES, dtype_bytes
from studytui.calc.forms import CalcSpec, DataDir, FieldSpec, ceilings_for
from studytui.calc.result import Result
from studytui.calc.units import FieldError

if TYPE_CHECKING:
    from studytui.calc.ceilings import Ceilings

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


def verify_regime(result: Result, gamma: int, batch: int, ceilings: Ceilings, weight_bytes: float) -> float:
    """Whether the target can verify gamma + 1 tokens per sequence for the price of one step.

    A decode step of a batch of B sequences reads every weight once; while its linear layers stay
    below the ridge point (2 FLOPs per weight per token over b bytes per weight: 2 T / b FLOP/B
    for T tokens), more tokens cost no more time. Returns about how many plain steps one
    verification costs: max(1, T_v / T*) / max(1, B / T*) with T_v = B (gamma + 1) and
    T* = ridge x b / 2."""
    if ceilings.peak_flops is None or ceilings.mem_bw is None:
        raise FieldError("gpu", "the verification check needs a peak FLOP/s and a memory bandwidth")
    ridge = ceilings.peak_flops / ceilings.mem_bw
    critical = ridge * weight_bytes / 2
    verify = batch * (gamma + 1)
    cost = max(1.0, verify / critical) / max(1.0, batch / critical)
    result.values.update(
        batch=batch, verify_tokens=verify, compute_bound_tokens=critical, verify_cost_steps=cost,
        gpu=ceilings.accelerator.id if ceilings.accelerator else None, dtype=ceilings.dtype,
    )
    result.step(
        f"target tokens per verification = batch x (g + 1) = {batch} x {gamma + 1} = {verify}; the step turns compute-bound past "
        f"ridge x b / 2 = {g(ridge)} x {g(weight_bytes)} / 2 = {g(critical)} tokens ({ceilings.gpu_label}, {ceilings.dtype} weights "
        "and math)"
    )
    result.step(
        f"verification cost = max(1, {verify} / {g(critical)}) / max(1, {batch} / {g(critical)}) = {g(cost)} plain target steps"
    )
    result.row("target tokens per verification", f"{verify:,} (compute-bound past ~{g(critical)} on {ceilings.gpu_label})")
    for line in ceilings.describe():
        result.assume(line)
    return cost


def specdec(
    alpha: float, gamma: int, cost_ratio: float = 0.0, op_cost_ratio: float | None = None, *,
    batch: int | None = None, ceilings: Ceilings | None = None,
) -> Result:
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
    result.assume(
        "verifying g + 1 tokens costs one target step: true while the target's decode step is memory-bound (its weights are read "
        "once however many tokens it checks); it breaks when the step is compute-bound, at large batches or long drafts, where "
        "verification costs up to g + 1 steps" + ("" if batch is not None else " (give --batch to check)")
    )
    if batch is not None and ceilings is not None:
        cost = verify_regime(result, gamma, batch, ceilings, dtype_bytes(ceilings.dtype))
        result.assume(
            "the compute-bound point counts the linear layers of a dense target, whose weight reads dominate the step; KV-cache "
            "reads and a mixture of experts keep a step memory-bound longer, so the check errs early"
        )
        if cost > 1.0:
            adjusted = tokens / (gamma * cost_ratio + cost)
            result.values["speedup_compute_bound"] = adjusted
            result.warn(
                f"batch {batch} x (g + 1) = {batch * (gamma + 1):,} tokens per verification makes the target step compute-bound: it "
                f"costs about {g(cost)} plain steps, not one, so the speedup above overstates; with that cost, E / (g c + "
                f"{g(cost)}) = {g(adjusted)}x"
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
    ceilings = ceilings_for(p, data_dir, ("peak_flops", "mem_bw")) if p["batch"] is not None else None
    return specdec(p["alpha"], p["gamma"], p["cost_ratio"], p["op_cost_ratio"], batch=p["batch"], ceilings=ceilings)


def _unused(p: dict[str, Any], given: frozenset[str]) -> dict[str, str]:
    if p["batch"] is None:
        reason = "the GPU and precision check whether verification fits in one target step: give --batch too"
        return {"gpu": reason, "dtype": reason}
    return {}


SPEC = CalcSpec(
    "specdec", "Speculative decoding",
    "Leviathan et al.: expected tokens per target step, walltime speedup, operations factor, best gamma.",
    (
        FieldSpec("alpha", "acceptance rate", "float", "0.8", maximum=1.0, allow_zero=True, help="0 <= alpha <= 1"),
        FieldSpec("gamma", "draft tokens per step", "int", "4"),
        FieldSpec("cost_ratio", "draft/target time ratio c", "float", "0", allow_zero=True),
        FieldSpec("op_cost_ratio", "draft/target ops ratio", "float", allow_zero=True, help="default: the time ratio"),
        FieldSpec("batch", "target batch (sequences)", "int", group="more",
                  help="optional: sequences verified together; checks that verifying g + 1 tokens still costs one target step"),
        FieldSpec("gpu", "GPU", "gpu", "h200", group="more", help="with --batch: the target's GPU"),
        FieldSpec("dtype", "precision", "dtype", DEFAULT_DTYPE, choices=DTYPES, group="more",
                  help="with --batch: the target's weights and math (its ridge point)"),
    ),
    _run,
    unused=_unused,
    # A free draft (the calculator's default c = 0) makes every gamma look good; start realistic.
    ui_defaults={"cost_ratio": "0.05"},
    headline=("expected tokens", "walltime speedup", "best gamma"),
    short_labels=((r"^expected tokens per target step$", "tokens per step"),),
    short_name="spec",
)
