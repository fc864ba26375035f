"""Declarative forms, shared by the CLI (flags) and the TUI (input boxes): the machinery every
calculator's `SPEC` is built from. The calculators themselves are listed in
studytui.calc.registry; each one's spec lives in its own module (studytui/calc/<name>.py).

A CalcSpec lists FieldSpecs; `run(values)` takes the raw strings a person typed (units allowed,
exactly as on the command line), parses them, and returns a Result. Bad input raises FieldError
(a UsageError) naming the field and the accepted values; nothing else escapes for bad input.
A spec also says how it is presented (starting values, headline rows, short labels, plot, tables
under the CLI's rows), so that a calculator is one module.
"""

from __future__ import annotations

import math
import os
from dataclasses import FrozenInstanceError
from typing import TYPE_CHECKING, Any, Callable, Mapping, TypeAlias

from studytui.calc.dtypes import DEFAULT_DTYPE, DTYPES, parse_dtype
from studytui.calc.registry import CALCULATORS as CALCULATORS  # every calculator's spec by name (loaded on use)
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
from studytui.core.records import FrozenRecord

if TYPE_CHECKING:
    from studytui.calc.ceilings import Ceilings
    from studytui.calc.models import ModelParams
    from studytui.calc.views import Sweep, TextTable

DataDir: TypeAlias = "str | os.PathLike[str] | None"

# "flops": a count of floating-point operations (1e12, 2TFLOP), read back in FLOPs.
KINDS = ("int", "float", "flops", "size", "rate", "flops_rate", "time", "dtype", "gpu", "model", "choice", "bool")
PROFILE_CHOICES = ("vendor", "measured")
_TRUE = {"1", "true", "yes", "y", "on"}
_FALSE = {"0", "false", "no", "n", "off"}


# FieldSpec and CalcSpec are plain classes (studytui.core.records), not dataclasses: every `calc`
# command imports this module, and on Python 3.11 a dataclass's generated methods cost about a
# millisecond each time it does (issue 27).
class FieldSpec(FrozenRecord):
    """One input of a calculator: a CLI flag and a box in the app's form."""

    __slots__ = ("name", "label", "kind", "default", "required", "choices", "help", "allow_zero", "maximum", "group",
                 "checked_by_calculator", "free")

    name: str  # key in run()'s values; CLI flag is --name with '_' -> '-'
    label: str
    kind: str  # one of KINDS
    default: str | None  # as a person would type it; None = unset
    required: bool
    choices: tuple[str, ...] | None
    help: str
    allow_zero: bool  # for int/float/time: 0 is meaningful (e.g. experts 0 = dense)
    maximum: float | None  # for float: inclusive upper limit
    # The collapsed group of rarely changed fields the app's form puts it in (an id of
    # studytui.calc.form_values.GROUPS); None: always in view.
    group: str | None
    # For a choice: the text goes to the calculator as typed, which checks it (the listed choices
    # are not enforced here) ...
    checked_by_calculator: bool
    # ... and the choices are only suggestions, so the app's form shows a text box, not a select
    # (profile: "vendor", "measured" or a FILE; a tile: any MxN).
    free: bool

    def __init__(
        self,
        name: str,
        label: str,
        kind: str,
        default: str | None = None,
        required: bool = False,
        choices: tuple[str, ...] | None = None,
        help: str = "",
        allow_zero: bool = False,
        maximum: float | None = None,
        group: str | None = None,
        checked_by_calculator: bool = False,
        free: bool = False,
    ) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "label", label)
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "default", default)
        object.__setattr__(self, "required", required)
        object.__setattr__(self, "choices", choices)
        object.__setattr__(self, "help", help)
        object.__setattr__(self, "allow_zero", allow_zero)
        object.__setattr__(self, "maximum", maximum)
        object.__setattr__(self, "group", group)
        object.__setattr__(self, "checked_by_calculator", checked_by_calculator)
        object.__setattr__(self, "free", free)

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")


PLOTS = ("roofline", "sweep")
# A point under the roofline: (label, arithmetic intensity in FLOP/B, FLOP/s).
PlotPoint: TypeAlias = "tuple[str, float, float]"


class CalcSpec:
    """A calculator: its form, how its inputs are run, and how the CLI and the app present it.

    Frozen, and compared by identity."""

    __slots__ = ("name", "title", "description", "fields", "compute", "renamed", "unused", "ui_defaults", "headline",
                 "short_labels", "short_name", "title_fields", "plot", "points", "sweep", "tables")

    name: str  # the last part of its module's name (studytui.calc.registry)
    title: str
    description: str  # what it computes: the CLI's help, the hub, the About panel
    fields: tuple[FieldSpec, ...]
    compute: Callable[[dict[str, Any], DataDir], Result]
    # Old field names still accepted (try-it links, scripts): old -> (new, how the old value maps).
    renamed: Mapping[str, tuple[str, Callable[[Any], Any]]]
    # Which fields the chosen inputs leave unused: (parsed values, given names) -> {field: reason}.
    unused: Callable[[dict[str, Any], frozenset[str]], dict[str, str]] | None
    # --- presentation ---
    # A starting example for the app's form where a field has no default (so the screen does not
    # open on an error); studytui.calc.form_values.initial_values applies it.
    ui_defaults: Mapping[str, str]
    # Results a learner reads first, by the start of their label: the app shows them above every
    # other row, so they stay on screen at 80x24 whatever the plot takes.
    headline: tuple[str, ...]
    # Shorter labels for narrow terminals, so rows that differ only at the end stay
    # distinguishable: (regular expression over the whole label, replacement), the first that
    # matches is used.
    short_labels: tuple[tuple[str, str], ...]
    short_name: str  # the name in the app's narrow F-key strip, where the name is long
    title_fields: tuple[str, ...]  # fields whose values the app's title line shows
    # The app's plot: None, "roofline" (a point under the roofline: the result has intensity and
    # ceilings) or "sweep" (a line along one input, drawn from `sweep`).
    plot: str | None
    # plot="roofline": the points to draw, (spec, result, form values, data dir) -> points;
    # None: roofline_points (the result's own point, and the measured one).
    points: Callable[[CalcSpec, Result, Mapping[str, str], DataDir], list[PlotPoint]] | None
    # plot="sweep": (result values, form values) -> the line to draw (studytui.calc.views).
    sweep: Callable[[Mapping[str, Any], Mapping[str, str]], Sweep] | None
    # Tables the CLI prints under the rows (an occupancy sweep): result -> tables (studytui.calc.views).
    tables: Callable[[Result], tuple[TextTable, ...]] | None

    def __init__(
        self,
        name: str,
        title: str,
        description: str,
        fields: tuple[FieldSpec, ...],
        compute: Callable[[dict[str, Any], DataDir], Result],
        renamed: Mapping[str, tuple[str, Callable[[Any], Any]]] | None = None,
        unused: Callable[[dict[str, Any], frozenset[str]], dict[str, str]] | None = None,
        ui_defaults: Mapping[str, str] | None = None,
        headline: tuple[str, ...] = (),
        short_labels: tuple[tuple[str, str], ...] = (),
        short_name: str = "",
        title_fields: tuple[str, ...] = (),
        plot: str | None = None,
        points: Callable[[CalcSpec, Result, Mapping[str, str], DataDir], list[PlotPoint]] | None = None,
        sweep: Callable[[Mapping[str, Any], Mapping[str, str]], Sweep] | None = None,
        tables: Callable[[Result], tuple[TextTable, ...]] | None = None,
    ) -> None:
        if plot is not None and plot not in PLOTS:
            raise ValueError(f"{name}: plot {plot!r} is not one of {', '.join(PLOTS)}")
        if plot == "sweep" and sweep is None:
            raise ValueError(f"{name}: plot='sweep' needs a sweep function")
        values = (name, title, description, fields, compute, {} if renamed is None else renamed, unused,
                  {} if ui_defaults is None else ui_defaults, headline, short_labels, short_name, title_fields, plot, points,
                  sweep, tables)
        for slot, value in zip(CalcSpec.__slots__, values):
            object.__setattr__(self, slot, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __repr__(self) -> str:
        return (f"CalcSpec(name={self.name!r}, title={self.title!r}, description={self.description!r}, fields={self.fields!r}, "
                f"short_name={self.short_name!r}, title_fields={self.title_fields!r}, plot={self.plot!r})")

    def field(self, name: str) -> FieldSpec:
        for spec in self.fields:
            if spec.name == name:
                return spec
        raise KeyError(name)

    def run(self, values: Mapping[str, Any], data_dir: DataDir = None, *, strict: bool = False) -> Result:
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
        if strict:  # the CLI: a flag given an empty value (--cc "") is refused, never read as the default
            for name, value in values.items():
                if isinstance(value, str) and value.strip() == "" and any(f.name == name for f in self.fields):
                    raise FieldError(name, "is empty: give a value, or leave the flag out for the default")
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
            raise UsageError(f"{self.name}: cannot compute with these inputs ({_reason(exc)}); "
                             "try smaller or larger values") from None
        check_finite(self.name, result)
        return result


def _reason(exc: Exception) -> str:
    """Why a computation failed, in a few words on one line: never Python's whole message (its
    advice on sys.set_int_max_str_digits is not the learner's to follow)."""
    from studytui.core.text import one_line

    text = str(exc)
    if "integer string conversion" in text or "int too large" in text:
        return "a number with too many digits"
    first = (text.splitlines() or [type(exc).__name__])[0]
    return one_line(first if len(first) <= 120 else first[:117] + "...")


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


def parse_field(spec: FieldSpec, text: Any) -> Any:
    if isinstance(text, bool) and spec.kind == "bool":
        return text
    text = str(text).strip()
    kind, name = spec.kind, spec.name
    if kind == "int":
        return parse_int(text, name, allow_zero=spec.allow_zero)
    if kind == "float":
        return parse_float(text, name, allow_zero=spec.allow_zero, maximum=spec.maximum)
    if kind == "flops":
        return parse_flops(text, name)
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
        if spec.checked_by_calculator or spec.free:
            return text  # profile: "vendor", "measured" or a FILE; a tile: any MxN (parsed by the calculator)
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


# ---- shared fields and adapters (what several calculators' specs are built from) ---------------

def gpu_fields(*, link: bool = False, dtype_help: str = "precision whose dense peak is used") -> list[FieldSpec]:
    """The GPU, its precision, and the ceilings' overrides and profile."""
    fields_ = [
        FieldSpec("gpu", "GPU", "gpu", "h200", help="accelerator id or alias (see 'studytui gpus')"),
        FieldSpec("dtype", "precision", "dtype", DEFAULT_DTYPE, choices=DTYPES, help=dtype_help),
        FieldSpec("peak_flops", "peak FLOP/s override", "flops_rate", help="replaces the GPU's peak, e.g. 989TFLOP/s", group="ceilings"),
        FieldSpec("mem_bw", "memory bandwidth override", "rate", help="replaces the GPU's HBM bandwidth, e.g. 4.8TB/s", group="ceilings"),
    ]
    if link:
        fields_.append(
            FieldSpec("link_bw", "link bandwidth override", "rate", help="per GPU per direction, e.g. 450GB/s", group="ceilings")
        )
    fields_.append(PROFILE)
    return fields_


PROFILE = FieldSpec("profile", "ceilings profile", "choice", "vendor", choices=PROFILE_CHOICES,
                    help="vendor peaks, 'measured' (your saved profile) or a profile FILE", group="ceilings", free=True)


def model_fields() -> list[FieldSpec]:
    """A model preset, and the dimensions that override it (in the form's "dims" group)."""
    dims = [
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
    return [
        FieldSpec("model", "model preset", "model", help="preset id (see 'studytui calc transformer --help'); dims below override it"),
        *(f._replace(group="dims") for f in dims),
    ]


MEASURED_TIME = FieldSpec("time", "measured time", "time", help="a time you measured; adds achieved rates and the physics-floor check")
QUANT_FIELDS = (
    FieldSpec("quant_group", "quantisation group", "int", "128", help="weights per scale for sub-byte weight formats", group="more"),
    FieldSpec("quant_scale_bytes", "scale bytes", "float", "2", help="bytes per group scale (fp16 = 2, e8m0 = 1)", group="more"),
)
MEM_FRACTION = FieldSpec("mem_fraction", "usable HBM fraction", "float", "0.9", maximum=1.0,
                         help="share of HBM for weights + KV (the rest: activations, context, fragmentation)", group="more")
CC_FIELDS = (
    FieldSpec("gpu", "GPU", "gpu", help="NVIDIA accelerator id or alias (default h200); or give a compute capability instead"),
    FieldSpec("cc", "compute capability", "choice", help="instead of a GPU: 7.0, 7.5, 8.0, 8.6, 8.9, 9.0, 10.0, 10.3, 12.0"),
)

_DIM_FIELDS = (
    "layers", "hidden", "intermediate", "heads", "kv_heads", "head_dim", "vocab", "experts", "active_experts",
    "shared_experts", "moe_intermediate", "dense_layers", "mla_kv_rank", "mla_rope_dim", "mla_q_rank",
    "mla_nope_dim", "mla_v_dim", "sliding_window", "sliding_layers", "tied_embeddings",
)


def resolve_model(p: dict[str, Any]) -> ModelParams:
    """A ModelParams from a preset plus overrides, or from custom dims."""
    from studytui.calc.models import ModelParams, get_preset, with_overrides

    dims: dict[str, Any] = {k: p.get(k) for k in _DIM_FIELDS}
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


def _check_model_fields(params: ModelParams, p: dict[str, Any]) -> ModelParams:
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
    gpu: str | None = p.get("gpu")
    return gpu


def ceilings_for(p: dict[str, Any], data_dir: DataDir, need: tuple[str, ...], dtype: str | None = None) -> Ceilings:
    """The ceilings for a calculator's parsed values: the GPU (or none, with custom overrides),
    its profile and the overrides. Calculators take ceilings from here, never from the catalog."""
    from studytui.calc.ceilings import resolve_ceilings

    gpu = _gpu_for(p)
    if gpu is None and p.get("gpu") and "gpu" not in (p.get("_given") or ()):
        missing = [n for n in ("peak_flops", "mem_bw") if n in need and p.get(n) is None]
        if missing:
            raise FieldError(missing[0], "custom ceilings need both --peak-flops and --mem-bw (or --gpu to take the rest from)")
    return resolve_ceilings(
        gpu, dtype or p.get("dtype") or DEFAULT_DTYPE, peak_flops=p.get("peak_flops"), mem_bw=p.get("mem_bw"),
        link_bw=p.get("link_bw"), memory_bytes=p.get("hbm"), net_bw=p.get("net_bw"), profile=p.get("profile") or "vendor",
        data_dir=data_dir, need=need,
    )


def roofline_points(spec: CalcSpec, result: Result, values: Mapping[str, str], data_dir: DataDir) -> list[PlotPoint]:
    """The points a roofline plot shows for a result: where it can run, and where it ran (with a
    measured time). A spec's own `points` replaces this."""
    v = result.values
    points: list[PlotPoint] = []
    if v.get("intensity") and v.get("attainable_flops"):
        points.append((f"{spec.name} (attainable)", float(v["intensity"]), float(v["attainable_flops"])))
    if v.get("intensity") and v.get("achieved_flops"):
        points.append(("measured", float(v["intensity"]), float(v["achieved_flops"])))
    return points


def plot_points(spec: CalcSpec, result: Result, values: Mapping[str, str], data_dir: DataDir) -> list[PlotPoint]:
    """A roofline-plotted calculator's points for this result (its own `points`, or the usual ones)."""
    return (spec.points or roofline_points)(spec, result, values, data_dir)


def choices_for(kind: str, data_dir: DataDir = None) -> list[str]:
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


def run(name: str, values: Mapping[str, Any], data_dir: DataDir = None) -> Result:
    """Run calculator `name` on raw strings."""
    spec = CALCULATORS.get(name)
    if spec is None:
        raise FieldError("calculator", f"unknown calculator {name!r}; accepted: {', '.join(CALCULATORS)}")
    return spec.run(values, data_dir)
