"""Declarative forms for every calculator, shared by the CLI (flags) and the TUI (input boxes).

Each CalcSpec lists FieldSpecs; `run(values)` takes the raw strings a person typed (units allowed,
exactly as on the command line), parses them, and returns a Result. Bad input raises FieldError
(a UsageError) naming the field and the accepted values; nothing else escapes for bad input.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from studytui.calc.dtypes import DEFAULT_DTYPE, DTYPES, parse_dtype
from studytui.calc.result import Result
from studytui.calc.units import (
    FieldError,
    parse_float,
    parse_flops,
    parse_flops_rate,
    parse_int,
    parse_rate,
    parse_size,
    parse_time,
)
from studytui.core.errors import UsageError

KINDS = ("int", "float", "size", "rate", "flops_rate", "time", "dtype", "gpu", "model", "choice", "bool")
PROFILE_CHOICES = ("vendor", "measured")
_TRUE = {"1", "true", "yes", "y", "on"}
_FALSE = {"0", "false", "no", "n", "off"}


@dataclass(frozen=True)
class FieldSpec:
    name: str  # key in run()'s values; CLI flag is --name with '_' -> '-'
    label: str
    kind: str  # one of KINDS
    default: str | None = None  # as a person would type it; None = unset
    required: bool = False
    choices: tuple[str, ...] | None = None
    help: str = ""
    allow_zero: bool = False  # for int/float/time: 0 is meaningful (e.g. experts 0 = dense)
    maximum: float | None = None  # for float: inclusive upper limit

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")


@dataclass(frozen=True)
class CalcSpec:
    name: str
    title: str
    description: str
    fields: tuple[FieldSpec, ...]
    compute: Callable[[dict[str, Any], Any], Result] = field(repr=False)
    # Old field names still accepted (try-it links, scripts): old -> (new, how the old value maps).
    renamed: Mapping[str, tuple[str, Callable[[Any], Any]]] = field(default_factory=dict, repr=False)
    # Which fields the chosen inputs leave unused: (parsed values, given names) -> {field: reason}.
    unused: Callable[[dict[str, Any], frozenset], dict[str, str]] | None = field(default=None, repr=False)

    def field(self, name: str) -> FieldSpec:
        for spec in self.fields:
            if spec.name == name:
                return spec
        raise KeyError(name)

    def run(self, values: Mapping[str, Any], data_dir: str | os.PathLike[str] | None = None, *, strict: bool = False) -> Result:
        """Parse raw strings (units allowed) and run the calculator. Raises FieldError/UsageError only.

        strict: every given field must be used by the chosen inputs (the CLI: a flag the calculator
        would ignore is an error). A form, which always holds every field, runs non-strict.
        """
        values = dict(values)
        for old, (new, convert) in self.renamed.items():
            if old in values:
                raw = values.pop(old)
                if new in values and values[new] not in (None, ""):
                    raise FieldError(old, f"give --{new.replace('_', '-')} only (--{old.replace('_', '-')} is its old name)")
                values[new] = convert(raw)
        given = frozenset(k for k, v in values.items() if v is not None and not (isinstance(v, str) and v.strip() == ""))
        parsed = parse_values(self, values)
        parsed["_given"] = given
        if strict and self.unused is not None:
            for name, reason in self.unused(parsed, given).items():
                if name in given:
                    raise FieldError(name, f"is not used here: {reason}")
        try:
            result = self.compute(parsed, data_dir)
        except (UsageError, KeyboardInterrupt):
            raise
        except (ZeroDivisionError, OverflowError, ValueError) as exc:  # never a traceback for odd input
            raise UsageError(f"{self.name}: cannot compute with these inputs ({exc}); try smaller or larger values") from None
        check_finite(self.name, result)
        return result


def check_finite(name: str, result: Result) -> None:
    """A result with an overflowed or vanished number is refused, never printed."""
    for key, value in result.values.items():
        if isinstance(value, float) and not math.isfinite(value):
            raise UsageError(f"{name}: the inputs are out of range: {key} is not a finite number; use smaller values")
    for key in _POSITIVE:
        value = result.values.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value <= 0:
            raise UsageError(f"{name}: the inputs are out of range: {key} underflows to zero; use other values")


# Results that are positive whenever the inputs make sense: zero means a float underflowed.
_POSITIVE = ("time_s", "speedup", "best_speedup", "flops", "bytes", "algbw", "busbw", "kv_bytes_per_token", "intensity")


def parse_bool(text: str, name: str) -> bool:
    key = str(text).strip().lower()
    if key in _TRUE:
        return True
    if key in _FALSE:
        return False
    raise FieldError(name, f"{text!r} is not yes/no; accepted: true, false, yes, no, 1, 0")


# Choice fields whose listed choices are only suggestions (profile: "vendor", "measured" or a
# FILE; tile: any MxN): the app's form shows them as text boxes, not selects.
FREE_CHOICE_FIELDS = frozenset({"profile", "tile"})
# Choice fields passed to the calculator as text, which checks them itself: the free ones, and
# stages ("auto" or a number; the form offers its listed choices).
CHECKED_BY_CALCULATOR = FREE_CHOICE_FIELDS | {"stages"}


def parse_field(spec: FieldSpec, text: Any) -> Any:
    if isinstance(text, bool) and spec.kind == "bool":
        return text
    text = str(text).strip()
    kind, name = spec.kind, spec.name
    if kind == "int":
        return parse_int(text, name, allow_zero=spec.allow_zero)
    if kind == "float":
        if name == "flops":
            return parse_flops(text, name)
        return parse_float(text, name, allow_zero=spec.allow_zero, maximum=spec.maximum)
    if kind == "size":
        return parse_size(text, name, allow_zero=spec.allow_zero)
    if kind == "rate":
        return parse_rate(text, name)
    if kind == "flops_rate":
        return parse_flops_rate(text, name)
    if kind == "time":
        return parse_time(text, name, allow_zero=spec.allow_zero)
    if kind == "dtype":
        return parse_dtype(text, name)
    if kind in ("gpu", "model"):
        return text
    if kind == "choice":
        if name in CHECKED_BY_CALCULATOR:
            return text  # profile: "vendor", "measured" or a FILE; tile: any MxN (parsed by the GEMM)
        key = text.lower()
        if spec.choices and key not in spec.choices:
            raise FieldError(name, f"unknown value {text!r}; accepted: {', '.join(spec.choices)}")
        return key
    if kind == "bool":
        return parse_bool(text, name)
    raise FieldError(name, f"unknown field kind {kind!r}")


def parse_values(spec: CalcSpec, values: Mapping[str, Any]) -> dict[str, Any]:
    known = {f.name: f for f in spec.fields}
    for key in values:
        if key not in known and key != "_given":
            raise FieldError(key, f"not a field of '{spec.name}'; fields: {', '.join(known)}")
    parsed: dict[str, Any] = {}
    for f in spec.fields:
        raw = values.get(f.name)
        if raw is None or (isinstance(raw, str) and raw.strip() == ""):
            raw = f.default
        if raw is None:
            if f.required:
                raise FieldError(f.name, f"required ({f.help or f.label})")
            parsed[f.name] = None
            continue
        parsed[f.name] = parse_field(f, raw)
    return parsed


# ---- shared field groups ------------------------------------------------------------------

def _gpu_fields(*, link: bool = False, dtype_help: str = "precision whose dense peak is used") -> list[FieldSpec]:
    fields_ = [
        FieldSpec("gpu", "GPU", "gpu", "h200", help="accelerator id or alias (see 'studytui gpus')"),
        FieldSpec("dtype", "precision", "dtype", DEFAULT_DTYPE, choices=DTYPES, help=dtype_help),
        FieldSpec("peak_flops", "peak FLOP/s override", "flops_rate", help="replaces the GPU's peak, e.g. 989TFLOP/s"),
        FieldSpec("mem_bw", "memory bandwidth override", "rate", help="replaces the GPU's HBM bandwidth, e.g. 4.8TB/s"),
    ]
    if link:
        fields_.append(FieldSpec("link_bw", "link bandwidth override", "rate", help="per GPU per direction, e.g. 450GB/s"))
    fields_.append(
        FieldSpec("profile", "ceilings profile", "choice", "vendor", choices=PROFILE_CHOICES,
                  help="vendor peaks, 'measured' (your saved profile) or a profile FILE")
    )
    return fields_


def _model_fields() -> list[FieldSpec]:
    return [
        FieldSpec("model", "model preset", "model", help="preset id (see 'studytui calc transformer --help'); dims below override it"),
        FieldSpec("layers", "layers", "int", help="transformer blocks"),
        FieldSpec("hidden", "hidden size d", "int", help="model width"),
        FieldSpec("intermediate", "MLP inner size F", "int", help="dense MLP inner size"),
        FieldSpec("heads", "query heads", "int"),
        FieldSpec("kv_heads", "KV heads", "int", help="default: heads (MHA)"),
        FieldSpec("head_dim", "head dim", "int", help="default: hidden / heads"),
        FieldSpec("vocab", "vocabulary", "int"),
        FieldSpec("experts", "routed experts E", "int", allow_zero=True, help="0 = dense"),
        FieldSpec("active_experts", "experts per token K", "int", allow_zero=True),
        FieldSpec("shared_experts", "shared experts", "int", allow_zero=True),
        FieldSpec("moe_intermediate", "expert inner size", "int"),
        FieldSpec("dense_layers", "leading dense layers", "int", allow_zero=True, help="dense layers before the MoE layers (DeepSeek: 3)"),
        FieldSpec("mla_kv_rank", "MLA KV rank d_c", "int", allow_zero=True, help="multi-head latent attention: cached latent size"),
        FieldSpec("mla_rope_dim", "MLA RoPE dim d_R", "int", allow_zero=True),
        FieldSpec("mla_q_rank", "MLA query rank", "int", allow_zero=True),
        FieldSpec("mla_nope_dim", "MLA no-RoPE head dim", "int", allow_zero=True),
        FieldSpec("mla_v_dim", "MLA value head dim", "int", allow_zero=True),
        FieldSpec("sliding_window", "sliding window", "int", allow_zero=True, help="tokens a sliding layer attends to"),
        FieldSpec("sliding_layers", "sliding layers", "int", allow_zero=True, help="how many layers use the window"),
        FieldSpec("mlp_matrices", "MLP matrices", "choice", choices=("2", "3"), help="3 = gated (SwiGLU, default), 2 = plain"),
        FieldSpec("tied_embeddings", "tied embeddings", "bool", help="lm_head shares the embedding matrix"),
    ]


_DIM_FIELDS = (
    "layers", "hidden", "intermediate", "heads", "kv_heads", "head_dim", "vocab", "experts", "active_experts",
    "shared_experts", "moe_intermediate", "dense_layers", "mla_kv_rank", "mla_rope_dim", "mla_q_rank",
    "mla_nope_dim", "mla_v_dim", "sliding_window", "sliding_layers", "tied_embeddings",
)


def resolve_model(p: dict[str, Any]):
    """A ModelParams from a preset plus overrides, or from custom dims."""
    from studytui.calc.models import ModelParams, get_preset, with_overrides

    dims = {k: p.get(k) for k in _DIM_FIELDS}
    if p.get("mlp_matrices") is not None:
        dims["mlp_matrices"] = int(p["mlp_matrices"])
    if p.get("model"):
        preset = get_preset(p["model"])
        params = with_overrides(preset.params, **dims)
        if any(v is not None for v in dims.values()):
            params = with_overrides(params, name=f"{preset.id} (modified)")
        return _check_model_fields(params.validate(), p)
    for needed in ("layers", "hidden", "heads", "vocab"):
        if dims[needed] is None:
            raise FieldError(needed, f"give --model PRESET or custom dims (--{needed.replace('_', '-')} is missing)")
    heads, hidden = dims["heads"], dims["hidden"]
    if dims["kv_heads"] is None:
        dims["kv_heads"] = heads
    if dims["head_dim"] is None:
        if hidden % heads:
            raise FieldError("head_dim", f"hidden ({hidden}) is not divisible by heads ({heads}); give --head-dim")
        dims["head_dim"] = hidden // heads
    if dims["intermediate"] is None:
        if not dims.get("experts") or dims.get("dense_layers"):
            raise FieldError("intermediate", "give --intermediate (the MLP inner size)")
        dims["intermediate"] = 0
    clean = {k: v for k, v in dims.items() if v is not None}
    return _check_model_fields(ModelParams(name="custom", **clean).validate(), p)


def _check_model_fields(params, p: dict[str, Any]):
    """A dimension given for a feature the model does not have is refused, not ignored."""
    given = p.get("_given") or frozenset()
    checks = (
        (("sliding_window",), params.sliding_layers == 0, "the model has no sliding-window layers (give --sliding-layers too)"),
        (("active_experts", "shared_experts", "moe_intermediate", "dense_layers"), params.experts == 0,
         "the model is dense (give --experts for a mixture of experts)"),
        (("mla_rope_dim", "mla_q_rank", "mla_nope_dim", "mla_v_dim"), params.mla_kv_rank == 0,
         "the model does not use multi-head latent attention (give --mla-kv-rank too)"),
    )
    for names, unused, reason in checks:
        for name in names:
            if name in given and unused and p.get(name):
                raise FieldError(name, f"is not used: {reason}")
    return params


def _gpu_for(p: dict[str, Any]) -> str | None:
    """The GPU whose figures fill what the overrides leave open.

    With --peak-flops or --mem-bw and no --gpu, the ceilings are custom: nothing is borrowed from
    the default GPU (its link, memory or the other peak), so what is missing is asked for.
    """
    given = p.get("_given") or frozenset()
    if "gpu" not in given and (p.get("peak_flops") is not None or p.get("mem_bw") is not None):
        return None
    return p.get("gpu")


def _ceilings(p: dict[str, Any], data_dir, need: tuple[str, ...], dtype: str | None = None):
    from studytui.calc.ceilings import resolve_ceilings

    gpu = _gpu_for(p)
    if gpu is None and p.get("gpu") and "gpu" not in (p.get("_given") or ()):
        missing = [n for n, flag in (("peak_flops", "--peak-flops"), ("mem_bw", "--mem-bw")) if n in need and p.get(n) is None]
        if missing:
            raise FieldError(missing[0], "custom ceilings need both --peak-flops and --mem-bw (or --gpu to take the rest from)")
    return resolve_ceilings(
        gpu, dtype or p.get("dtype") or DEFAULT_DTYPE, peak_flops=p.get("peak_flops"), mem_bw=p.get("mem_bw"),
        link_bw=p.get("link_bw"), memory_bytes=p.get("hbm"), net_bw=p.get("net_bw"), profile=p.get("profile") or "vendor",
        data_dir=data_dir, need=need,
    )


# ---- calculators ----------------------------------------------------------------------------

def _run_roofline(p: dict[str, Any], data_dir) -> Result:
    from studytui.calc.roofline import roofline

    if p["flops"] is None and p["bytes"] is None and p["intensity"] is None:
        raise FieldError("flops", "give --flops and --bytes, or --intensity")
    ceilings = _ceilings(p, data_dir, ("peak_flops", "mem_bw"))
    return roofline(ceilings, flops=p["flops"], bytes=p["bytes"], intensity=p["intensity"], measured_time=p["time"])


def _run_gemm(p: dict[str, Any], data_dir) -> Result:
    from studytui.calc.gemm import gemm, parse_tile

    dtype = p["dtype"]
    ceilings = _ceilings(p, data_dir, ("peak_flops", "mem_bw"))
    return gemm(
        ceilings, p["m"], p["n"], p["k"], a_dtype=p["a_dtype"] or dtype, b_dtype=p["b_dtype"] or dtype,
        c_dtype=p["c_dtype"] or dtype, tile=parse_tile(p["tile"]), sm_count=p["sms"], measured_time=p["time"],
    )


def _run_transformer(p: dict[str, Any], data_dir) -> Result:
    from studytui.calc.transformer import transformer

    params = resolve_model(p)
    need = ("peak_flops", "mem_bw") + (("link_bw",) if p["tp"] > 1 else ())
    ceilings = _ceilings(p, data_dir, need)
    domain = ceilings.accelerator.domain_size if ceilings.accelerator else None
    if p["tp"] > 1 and "net_bw" in (p.get("_given") or ()) and (domain is None or p["tp"] <= domain):
        where = f"TP {p['tp']} fits in one {domain}-GPU scale-up domain" if domain else "no scale-up domain is known for these ceilings"
        raise FieldError("net_bw", f"is not used: {where}; the network carries TP traffic only past the domain")
    return transformer(
        params, ceilings, phase=p["phase"], batch=p["batch"], prompt=p["prompt"], context=p["context"],
        weight_dtype=p["weight_dtype"], kv_dtype=p["kv_dtype"], act_dtype=p["act_dtype"], tp=p["tp"],
        causal=bool(p["causal"]), quant_group=p["quant_group"], quant_scale_bytes=p["quant_scale_bytes"],
        latency=p["latency"], mfu=p["mfu"], mbu=p["mbu"], mem_fraction=p["mem_fraction"],
    )


def _run_collective(p: dict[str, Any], data_dir) -> Result:
    from dataclasses import replace

    from studytui.calc.collective import Fabric, collective

    given = p.get("_given") or frozenset()
    if p["link_bw"] is not None and "gpu" not in given:
        # A custom link: no system to take a domain or a network from but what was given.
        fabric = Fabric(p["link_bw"], "override (--link-bw, per direction)", "link (--link-bw)", domain=p.get("domain"),
                        net_bw=p.get("net_bw"), net_label="override (--net-bw)" if p.get("net_bw") else "",
                        net_name="network (--net-bw)")
    else:
        if not p["gpu"]:
            raise FieldError("gpu", "give --gpu (its scale-up link) or --link-bw (per direction)")
        ceilings = _ceilings(p, data_dir, ("link_bw",))
        fabric = ceilings.fabric(gpus=p["gpus"])
        if p.get("domain"):
            fabric = replace(fabric, domain=p["domain"])
    if "net_bw" in given and (fabric.domain is None or p["gpus"] <= fabric.domain):
        where = (
            f"{p['gpus']} GPUs fit in one {fabric.domain}-GPU scale-up domain"
            if fabric.domain
            else "the scale-up domain size is unknown (give --domain)"
        )
        raise FieldError("net_bw", f"is not used: {where}; the network is crossed only past the domain")
    return collective(p["op"], p["gpus"], p["bytes"], latency=p["latency"], fabric=fabric)


def _run_specdec(p: dict[str, Any], data_dir) -> Result:
    from studytui.calc.specdec import specdec

    return specdec(p["alpha"], p["gamma"], p["cost_ratio"], p["op_cost_ratio"])


def _unused_transformer(p: dict[str, Any], given: frozenset) -> dict[str, str]:
    from studytui.calc.dtypes import dtype_bytes

    out: dict[str, str] = {}
    if p["phase"] == "prefill":
        out["context"] = "--phase prefill processes --prompt tokens; --context is for --phase decode"
    else:
        out["prompt"] = "--phase decode runs one step over --context cached tokens; --prompt is for --phase prefill"
        out["causal"] = "causal masking changes prefill attention only; a decode step attends to the whole cache"
    if p["tp"] == 1:
        out["link_bw"] = "the link carries tensor-parallel traffic only; give --tp N"
        out["latency"] = "the all-reduce latency applies with --tp N only"
        out["net_bw"] = "the network carries tensor-parallel traffic only; give --tp N"
    if dtype_bytes(p["weight_dtype"]) >= 1:
        for name in ("quant_group", "quant_scale_bytes"):
            out[name] = f"group scales apply to sub-byte weight formats only (--weight-dtype is {p['weight_dtype']})"
    return out


def _unused_memory(p: dict[str, Any], given: frozenset) -> dict[str, str]:
    from studytui.calc.dtypes import dtype_bytes

    if dtype_bytes(p["weight_dtype"]) >= 1:
        reason = f"group scales apply to sub-byte weight formats only (--weight-dtype is {p['weight_dtype']})"
        return {"quant_group": reason, "quant_scale_bytes": reason}
    return {}


def _unused_collective(p: dict[str, Any], given: frozenset) -> dict[str, str]:
    out: dict[str, str] = {}
    if p["link_bw"] is not None and "gpu" not in given:
        out["profile"] = "--link-bw replaces the link a profile would supply; give --gpu with --profile, or drop --profile"
    return out


def _run_kv(p: dict[str, Any], data_dir) -> Result:
    from studytui.calc.transformer import kv_cache

    params = resolve_model(p)
    ceilings = _ceilings(p, data_dir, ()) if (p.get("gpu") or p.get("hbm")) else None
    return kv_cache(params, kv_dtype=p["kv_dtype"], batch=p["batch"], context=p["context"], ceilings=ceilings)


def _run_memory(p: dict[str, Any], data_dir) -> Result:
    from studytui.calc.transformer import memory_plan

    params = resolve_model(p)
    ceilings = _ceilings(p, data_dir, ())
    return memory_plan(
        params, ceilings, weight_dtype=p["weight_dtype"], kv_dtype=p["kv_dtype"], batch=p["batch"], context=p["context"],
        tp=p["tp"], quant_group=p["quant_group"], quant_scale_bytes=p["quant_scale_bytes"], mem_fraction=p["mem_fraction"],
    )


_MEASURED_TIME = FieldSpec("time", "measured time", "time", help="a time you measured; adds achieved rates and the physics-floor check")
_QUANT = [
    FieldSpec("quant_group", "quantisation group", "int", "128", help="weights per scale for sub-byte weight formats"),
    FieldSpec("quant_scale_bytes", "scale bytes", "float", "2", help="bytes per group scale (fp16 = 2, e8m0 = 1)"),
]
_MEM_FRACTION = FieldSpec("mem_fraction", "usable HBM fraction", "float", "0.9", maximum=1.0,
                          help="share of HBM for weights + KV (the rest: activations, context, fragmentation)")

CALCULATORS: dict[str, CalcSpec] = {}


def _register(spec: CalcSpec) -> None:
    CALCULATORS[spec.name] = spec


_register(CalcSpec(
    "roofline", "Roofline",
    "Intensity, ridge point, attainable FLOP/s, bound, and the time floor max(FLOPs/peak, bytes/bandwidth) "
    "(plus the serial no-overlap estimate). --time adds achieved rates and flags times below the floor as impossible.",
    (
        *_gpu_fields(link=True),
        FieldSpec("flops", "FLOPs", "float", help="work, e.g. 1e12 or 2TFLOP"),
        FieldSpec("bytes", "bytes moved", "size", help="HBM traffic, e.g. 1GB or 64MiB"),
        FieldSpec("intensity", "intensity (FLOP/B)", "float", help="instead of one of flops/bytes"),
        _MEASURED_TIME,
    ),
    _run_roofline,
))

_register(CalcSpec(
    "gemm", "GEMM",
    "C[M,N] = A[M,K] x B[K,N]: 2MNK FLOPs, minimum bytes, intensity, bound, time; output tiles, waves over "
    "the SMs, last-wave utilisation and what a Stream-K split recovers.",
    (
        FieldSpec("m", "M", "int", "4096", required=True, help="rows of A and C"),
        FieldSpec("n", "N", "int", "4096", required=True, help="columns of B and C"),
        FieldSpec("k", "K", "int", "4096", required=True, help="the reduction dimension"),
        *_gpu_fields(dtype_help="math precision (its dense peak sets the compute time)"),
        FieldSpec("a_dtype", "A precision", "dtype", choices=DTYPES, help="default: --dtype"),
        FieldSpec("b_dtype", "B precision", "dtype", choices=DTYPES, help="default: --dtype"),
        FieldSpec("c_dtype", "C precision", "dtype", choices=DTYPES, help="default: --dtype"),
        FieldSpec("tile", "output tile", "choice", "128x128", choices=("64x64", "128x64", "128x128", "128x256", "256x128"),
                  help="MxN tile each SM computes (any MxN accepted)"),
        FieldSpec("sms", "SM count", "int", help="default: the GPU's"),
        _MEASURED_TIME,
    ),
    _run_gemm,
))

_register(CalcSpec(
    "transformer", "Transformer inference",
    "Parameters, FLOPs (2 per multiply-add, attention context terms, lm_head), bytes (weights once per step, "
    "KV cache, activations), KV bytes/token, and for one prefill or one decode step: compute, memory and TP "
    "communication times, the max() lower bound and the serial sum() estimate, tokens/s, TTFT/TPOT, and memory fit.",
    (
        *_model_fields(),
        FieldSpec("phase", "phase", "choice", "decode", choices=("prefill", "decode"),
                  help="prefill: the whole prompt batch; decode: one step"),
        FieldSpec("batch", "batch (sequences)", "int", "1"),
        FieldSpec("prompt", "prompt tokens", "int", "2048", help="prefill: tokens per sequence"),
        FieldSpec("context", "context tokens", "int", "4096", help="decode: tokens already cached per sequence"),
        FieldSpec("weight_dtype", "weight precision", "dtype", "bf16", choices=DTYPES),
        FieldSpec("kv_dtype", "KV precision", "dtype", "bf16", choices=DTYPES),
        FieldSpec("act_dtype", "activation precision", "dtype", "bf16", choices=DTYPES),
        *_QUANT,
        FieldSpec("tp", "tensor parallel GPUs", "int", "1"),
        FieldSpec("latency", "all-reduce step latency", "time", "1us", allow_zero=True, help="per ring step"),
        FieldSpec("net_bw", "network bandwidth override", "rate",
                  help="scale-out network per GPU per direction, for --tp past the scale-up domain, e.g. 50GB/s"),
        FieldSpec("causal", "causal attention", "bool", "true",
                  help="prefill: a causal kernel skips the masked half of the T^2 scores (--no-causal: bidirectional, the full square)"),
        FieldSpec("mfu", "MFU", "float", "1", maximum=1.0, help="fraction of peak FLOP/s reached (1 = lower bound)"),
        FieldSpec("mbu", "MBU", "float", "1", maximum=1.0, help="fraction of peak bandwidth reached (1 = lower bound)"),
        _MEM_FRACTION,
        *_gpu_fields(link=True, dtype_help="compute precision (its dense peak sets the compute time)"),
        FieldSpec("hbm", "HBM capacity override", "size", help="replaces the GPU's memory capacity, e.g. 141GiB"),
    ),
    _run_transformer,
    renamed={"causal_half": ("causal", lambda v: v)},
    unused=_unused_transformer,
))

_register(CalcSpec(
    "collective", "Collective",
    "Collective time over N GPUs at the one-way link rate plus a per-step latency, hierarchical past the "
    "scale-up domain (link inside, network across, bottleneck named), with nccl-tests byte conventions and bus bandwidth.",
    (
        FieldSpec("op", "operation", "choice", "all_reduce",
                  choices=("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast")),
        FieldSpec("gpus", "GPUs", "int", "8"),
        FieldSpec("bytes", "bytes (nccl-tests size)", "size", "1GiB"),
        FieldSpec("gpu", "GPU", "gpu", "h200", help="its scale-up link (one way), domain size and scale-out network are used"),
        FieldSpec("link_bw", "link bandwidth", "rate", help="per GPU per direction, e.g. 450GB/s"),
        FieldSpec("net_bw", "network bandwidth", "rate",
                  help="scale-out network per GPU per direction past the scale-up domain, e.g. 50GB/s"),
        FieldSpec("domain", "scale-up domain", "int", help="GPUs in one scale-up domain (default: the GPU's, e.g. 8 on HGX)"),
        FieldSpec("latency", "latency per step", "time", "1us", allow_zero=True),
        FieldSpec("profile", "ceilings profile", "choice", "vendor", choices=PROFILE_CHOICES,
                  help="vendor peaks, 'measured' (your saved profile) or a profile FILE"),
    ),
    _run_collective,
    unused=_unused_collective,
))

_register(CalcSpec(
    "specdec", "Speculative decoding",
    "Leviathan et al.: expected tokens per target step, walltime speedup, operations factor, best gamma.",
    (
        FieldSpec("alpha", "acceptance rate", "float", "0.8", maximum=1.0, allow_zero=True, help="0 <= alpha <= 1"),
        FieldSpec("gamma", "draft tokens per step", "int", "4"),
        FieldSpec("cost_ratio", "draft/target time ratio c", "float", "0", allow_zero=True),
        FieldSpec("op_cost_ratio", "draft/target ops ratio", "float", allow_zero=True, help="default: the time ratio"),
    ),
    _run_specdec,
))

_register(CalcSpec(
    "kv", "KV cache",
    "KV cache bytes per token, per sequence and per batch (GQA, MQA, MLA, sliding windows).",
    (
        *_model_fields(),
        FieldSpec("kv_dtype", "KV precision", "dtype", "bf16", choices=DTYPES),
        FieldSpec("batch", "batch (sequences)", "int", "1"),
        FieldSpec("context", "context tokens", "int", "4096"),
        FieldSpec("gpu", "GPU", "gpu", help="optional: show the share of its HBM"),
        FieldSpec("hbm", "HBM capacity override", "size", help="instead of a GPU's memory capacity, e.g. 80GiB"),
    ),
    _run_kv,
))

_register(CalcSpec(
    "memory", "Memory fit",
    "What fits in HBM: weights + KV per GPU, the largest batch at a context and the longest context at a batch.",
    (
        *_model_fields(),
        FieldSpec("gpu", "GPU", "gpu", "h200", help="accelerator id or alias"),
        FieldSpec("weight_dtype", "weight precision", "dtype", "bf16", choices=DTYPES),
        FieldSpec("kv_dtype", "KV precision", "dtype", "bf16", choices=DTYPES),
        *_QUANT,
        FieldSpec("batch", "batch (sequences)", "int", "1"),
        FieldSpec("context", "context tokens", "int", "4096"),
        FieldSpec("tp", "GPUs (tensor parallel)", "int", "1"),
        _MEM_FRACTION,
        FieldSpec("hbm", "HBM capacity override", "size", help="replaces the GPU's memory capacity, e.g. 141GiB"),
    ),
    _run_memory,
    unused=_unused_memory,
))


def _whole_bytes(p: dict[str, Any], name: str) -> int:
    value = p.get(name) or 0
    if value != int(value):
        raise FieldError(name, f"{value:g} is not a whole number of bytes")
    return int(value)


def _run_occupancy(p: dict[str, Any], data_dir) -> Result:
    from studytui.calc.occupancy import occupancy, resolve_cc

    cc, label = resolve_cc(p.get("gpu"), p.get("cc"), data_dir)
    sm_count = None
    if p.get("gpu") or not p.get("cc"):
        from studytui.calc.hardware import load_catalog

        sm_count = load_catalog(data_dir).get(p.get("gpu") or "h200").sm_count
    return occupancy(
        cc, p["threads"], p["regs"], _whole_bytes(p, "smem"), _whole_bytes(p, "dyn_smem"), cluster=p.get("cluster") or 1,
        non_portable=bool(p.get("non_portable")), carveout=p.get("carveout"), sweep_axis=p.get("sweep"), label=label,
        sm_count=sm_count,
    )


def _run_tile(p: dict[str, Any], data_dir) -> Result:
    from studytui.calc.occupancy import resolve_cc
    from studytui.calc.tile import parse_stages, parse_tile3, tile_budget

    cc, label = resolve_cc(p.get("gpu"), p.get("cc"), data_dir)
    m, n, k = parse_tile3(p["tile"])
    return tile_budget(
        cc, m, n, k, p["dtype"], c_dtype=p["c_dtype"], stages=parse_stages(p.get("stages")), threads=p["threads"],
        regs=p.get("regs"), epilogue=p.get("epilogue") or "smem", label=label,
    )


def _unused_occupancy(p: dict[str, Any], given: frozenset) -> dict[str, str]:
    out: dict[str, str] = {}
    if (p.get("cluster") or 1) <= 8:
        out["non_portable"] = "the non-portable opt-in matters only for clusters above 8 blocks (--cluster)"
    return out


def _unused_tile(p: dict[str, Any], given: frozenset) -> dict[str, str]:
    out: dict[str, str] = {}
    if p.get("epilogue") == "none":
        out["c_dtype"] = "--epilogue none stages no C tile in shared memory, so its precision is not used"
    return out


_CC_FIELDS = (
    FieldSpec("gpu", "GPU", "gpu", help="NVIDIA accelerator id or alias (default h200); or give --cc"),
    FieldSpec("cc", "compute capability", "choice", help="instead of --gpu: 7.0, 7.5, 8.0, 8.6, 8.9, 9.0, 10.0, 10.3, 12.0"),
)

_register(CalcSpec(
    "occupancy", "Occupancy",
    "Blocks per SM from each limit (warps, blocks, registers, shared memory), the binding one, active warps "
    "and occupancy, registers and shared memory as allocated (granularities, per-block reservation), and what "
    "reaches the next occupancy step. --sweep threads|regs|smem prints occupancy across a range.",
    (
        *_CC_FIELDS,
        FieldSpec("threads", "threads per block", "int", "256", required=True, help="1 to 1024"),
        FieldSpec("regs", "registers per thread", "int", "32", required=True, help="as nvcc -Xptxas -v reports (at most 255)"),
        FieldSpec("smem", "static shared memory", "size", "0", allow_zero=True, help="bytes per block declared __shared__ (1KiB = 1024)"),
        FieldSpec("dyn_smem", "dynamic shared memory", "size", "0", allow_zero=True, help="bytes per block given at launch"),
        FieldSpec("cluster", "cluster size", "int", "1", help="blocks per thread-block cluster (9.0 and later)"),
        FieldSpec("non_portable", "non-portable cluster", "bool", "false", help="allow clusters above 8 blocks where the part supports 16"),
        FieldSpec("carveout", "carve-out preference %", "int", allow_zero=True,
                  help="preferred shared-memory carve-out, 0-100 (default: the driver's)"),
        FieldSpec("sweep", "sweep", "choice", choices=("threads", "regs", "smem"),
                  help="print occupancy across threads, registers or dynamic shared memory"),
    ),
    _run_occupancy,
    unused=_unused_occupancy,
))

_register(CalcSpec(
    "tile", "GEMM tile budget",
    "Shared memory per pipeline stage for the A and B tiles, how many stages fit beside the epilogue buffer, "
    "blocks per SM at that footprint, accumulator registers per thread (tensor-memory columns on Blackwell).",
    (
        *_CC_FIELDS,
        FieldSpec("tile", "tile MxNxK", "choice", "128x128x64", required=True,
                  choices=("64x64x32", "128x128x32", "128x128x64", "128x256x64", "256x128x64"), help="block tile, any MxNxK"),
        FieldSpec("dtype", "input precision", "dtype", DEFAULT_DTYPE, choices=DTYPES, help="A and B element type"),
        FieldSpec("c_dtype", "output precision", "dtype", "bf16", choices=DTYPES, help="C element type (epilogue buffer)"),
        FieldSpec("stages", "pipeline stages", "choice", "auto", choices=("auto", "2", "3", "4", "5", "6", "7", "8"),
                  help="N or auto (the most that fit)"),
        FieldSpec("threads", "threads per block", "int", "128"),
        FieldSpec("regs", "registers per thread", "int", help="optional: counts the register limit in blocks per SM"),
        FieldSpec("epilogue", "epilogue via shared memory", "choice", "smem", choices=("smem", "none")),
    ),
    _run_tile,
    unused=_unused_tile,
))


def choices_for(kind: str, data_dir: str | os.PathLike[str] | None = None) -> list[str]:
    """Values a TUI can offer for a field kind (gpu ids, model presets, dtypes)."""
    if kind == "gpu":
        from studytui.calc.hardware import load_catalog

        return load_catalog(data_dir).ids()
    if kind == "model":
        from studytui.calc.models import load_presets

        return list(load_presets())
    if kind == "dtype":
        return list(DTYPES)
    return []


def run(name: str, values: Mapping[str, Any], data_dir: str | os.PathLike[str] | None = None) -> Result:
    """Run calculator `name` on raw strings."""
    spec = CALCULATORS.get(name)
    if spec is None:
        raise FieldError("calculator", f"unknown calculator {name!r}; accepted: {', '.join(CALCULATORS)}")
    return spec.run(values, data_dir)
