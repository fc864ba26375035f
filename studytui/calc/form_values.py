"""How calculator forms are presented, and the values they start with (the form layer; no
Textual, no terminal). Adding a calculator: its CalcSpec in studytui/calc/forms.py, and its
title (and, if it needs them, starting values, plot kind, always-visible fields) here.

Starting values, later wins: the calculator's own defaults, a worked example for fields the
calculator leaves empty (so every screen shows results at once), the learner's remembered GPU
and precision, and an entry's try-it arguments. The app's forms and `studytui check` (which runs
every try-it link through the calculator) both start from here, so they agree.

Cheap to import (studytui.calc.forms is not loaded): the app reads the titles at startup.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

if TYPE_CHECKING:
    from studytui.calc.forms import CalcSpec, FieldSpec

# (name, title) for each calculator, in the order the hub and the palette list them; a test
# checks these match studytui.calc.forms.CALCULATORS.
CALCULATOR_TITLES: tuple[tuple[str, str], ...] = (
    ("roofline", "Roofline"),
    ("gemm", "GEMM"),
    ("transformer", "Transformer inference"),
    ("collective", "Collective"),
    ("specdec", "Speculative decoding"),
    ("kv", "KV cache"),
    ("memory", "Memory fit"),
    ("occupancy", "Occupancy"),
    ("tile", "GEMM tile budget"),
)

# Calculators whose result is a point under a roofline (they report intensity and ceilings).
PLOTTED = frozenset({"roofline", "gemm", "transformer"})
# Calculators with a sweep plot instead.
SWEEP_PLOTTED = frozenset({"occupancy"})

# Rarely changed fields sit in collapsed groups: (group id, title, field names).
MODEL_DIMS = frozenset({
    "layers", "hidden", "intermediate", "heads", "kv_heads", "head_dim", "vocab", "experts", "active_experts",
    "shared_experts", "moe_intermediate", "dense_layers", "mla_kv_rank", "mla_rope_dim", "mla_q_rank",
    "mla_nope_dim", "mla_v_dim", "sliding_window", "sliding_layers", "mlp_matrices", "tied_embeddings",
})
CEILING_OVERRIDES = frozenset({"peak_flops", "mem_bw", "link_bw", "profile", "hbm"})
MORE_OPTIONS = frozenset({
    "a_dtype", "b_dtype", "c_dtype", "sms", "quant_group", "quant_scale_bytes", "latency", "causal", "net_bw", "domain",
    "mfu", "mbu", "mem_fraction",
})
GROUPS = (
    ("dims", "Model dimensions (override the preset)", MODEL_DIMS),
    ("ceilings", "Ceilings: profile and overrides", CEILING_OVERRIDES),
    ("more", "More options", MORE_OPTIONS),
)
# Fields a calculator keeps in view although their group is collapsed elsewhere.
ALWAYS_VISIBLE: dict[str, frozenset[str]] = {
    "collective": frozenset({"link_bw", "latency"}),  # the collective's link is its main input
    "gemm": frozenset({"time"}),
}


def group_of(spec: "CalcSpec", field: "FieldSpec") -> str | None:
    """Which collapsed group a field sits in (None: always visible)."""
    if field.name in ALWAYS_VISIBLE.get(spec.name, ()):
        return None
    for group_id, _title, names in GROUPS:
        if field.name in names:
            return group_id
    return None


# A starting example where the calculator has no default (it would otherwise open on an error).
UI_DEFAULTS: dict[str, dict[str, str]] = {
    "roofline": {"flops": "1e12", "bytes": "10GB"},
    "transformer": {"model": "llama-3.1-8b"},
    "kv": {"model": "llama-3.1-8b"},
    "memory": {"model": "llama-3.1-70b"},
    # A free draft (the calculator's default c = 0) makes every gamma look good; start realistic.
    "specdec": {"cost_ratio": "0.05"},
}
DEFAULT_GPU = "h200"


def as_text(value: Any) -> str:
    """A YAML value as the text a person would type in the box."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return str(value).strip()


def initial_values(
    spec: "CalcSpec",
    args: Mapping[str, Any] | None = None,
    remembered_gpu: str | None = None,
    remembered_dtype: str | None = None,
) -> dict[str, str]:
    names = {f.name for f in spec.fields}
    values = {f.name: f.default for f in spec.fields if f.default is not None}
    values.update({k: v for k, v in UI_DEFAULTS.get(spec.name, {}).items() if k in names})
    if "gpu" in names:
        values["gpu"] = remembered_gpu or values.get("gpu") or DEFAULT_GPU
    if "dtype" in names and remembered_dtype:
        values["dtype"] = remembered_dtype
    for key, value in (args or {}).items():
        if key in names and value is not None:
            values[key] = as_text(value)
    return values
