"""The figures a problem gives the learner, read from the catalogs the calculators read.

A problem's `given` list names figures of a GPU (the hardware catalog, through the same ceilings
the calculators use), of a model preset, or of an NVIDIA compute capability; or states a figure of
its own. Each becomes a `Fact`: the name its hand formula uses, the line the learner sees (with the
figure's label: dense or sparse, tensor core or vector pipe, GB as printed and how it is read, one
way or both), and the value in SI units. Nothing here is copied into content, so a catalog change
shows up in every question that uses it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from studytui.core.errors import UsageError
from studytui.core.tuples import Tuple

if TYPE_CHECKING:
    from studytui.calc.ceilings import Ceilings
    from studytui.calc.hardware import Accelerator
    from studytui.calc.models import ParamCounts, Preset
    from studytui.calc.occupancy import ComputeCapability
    from studytui.practice.model import Variant

SOURCES = ("gpu", "model", "cc", "value")


class GivenError(UsageError):
    """A `given` item that names an unknown figure, GPU, model or compute capability."""


class Fact(Tuple):
    """One figure given under a question. (A named tuple: cheaper to create at import than a
    frozen dataclass, see practice/model.py.)"""

    name: str  # what the hand formula calls it
    text: str  # the line shown under the question
    value: float  # SI units


def _g(x: float) -> str:
    return f"{x:g}"


def _big(n: float) -> str:
    """A parameter count the way people write it: '8.03 billion (8,030,261,248)'."""
    whole = int(round(n))
    if whole >= 10**9:
        return f"{whole / 1e9:.4g} billion ({whole:,})"
    if whole >= 10**6:
        return f"{whole / 1e6:.4g} million ({whole:,})"
    return f"{whole:,}"


# ---- GPUs ------------------------------------------------------------------------------------

GPU_FIGURES = ("peak_<dtype>", "hbm_bw", "hbm", "link", "sms", "net", "domain", "l2")


def _pipe(acc: Accelerator, dtype: str, key: str) -> str:
    matrix = {"NVIDIA": "tensor-core", "AMD": "matrix-core"}.get(acc.vendor, "matrix-unit")
    if dtype == "fp64":
        if key == "fp64_tensor":
            vector = acc.peak_flops.get("fp64")
            other = f"; the fp64 vector pipe is {_g(vector / 1e12)} TFLOP/s" if vector else ""
            return f"dense fp64 {matrix} peak (the DGEMM rate{other})"
        return "fp64 vector-pipe peak"
    if dtype == "fp32":
        return "fp32 vector-pipe peak (not the tensor cores)"
    return f"dense {dtype} {matrix} peak (not the 2:4 sparse figure)"


def _gpu_fact(acc: Accelerator, ceilings: Ceilings, figure: str, name: str) -> Fact:
    label = acc.name
    if figure.startswith("peak_"):
        dtype = figure[len("peak_"):]
        from studytui.calc.dtypes import DTYPES, peak_keys

        if dtype not in DTYPES:
            raise GivenError(f"'{figure}': unknown precision {dtype!r} (known: {', '.join(DTYPES)})")
        key = next((k for k in peak_keys(dtype) if k in acc.peak_flops), None)
        if key is None:
            raise GivenError(f"{acc.id} has no {dtype} peak in the catalog")
        value = acc.peak_flops[key]
        unit = "TOPS" if dtype.startswith("int") else "TFLOP/s"
        return Fact(name, f"{label}: {_pipe(acc, dtype, key)} {_g(value / 1e12)} {unit} (vendor peak)", value)
    if figure == "hbm_bw":
        return Fact(name, f"{label}: HBM bandwidth {_g(acc.mem_bw / 1e12)} TB/s (vendor peak; TB = 10^12 B)", acc.mem_bw)
    if figure == "hbm":
        if acc.memory_bytes is None:
            raise GivenError(f"{acc.id} has no memory capacity in the catalog")
        if acc.memory_datasheet_bytes is not None:
            mib = acc.raw.get("memory_reported_mib")
            text = f"{label}: memory {mib:,} MiB as the device reports it (ECC on); the datasheet says {_g(acc.memory_gb or 0)} GB"
        else:
            gb = _g(acc.memory_gb or 0)
            text = (f"{label}: HBM {gb} {acc.memory_unit} as printed, read here as {gb} GiB = {gb} x 2^30 B "
                    f"({acc.memory_bytes / 1e9:.1f} x 10^9 B)")
        return Fact(name, text, acc.memory_bytes)
    if figure == "link":
        bw = ceilings.link_bw_per_direction
        if bw is None:
            raise GivenError(f"{acc.id} has no scale-up link in the catalog")
        what = acc.interconnect_name or "scale-up link"
        if acc.axis_bw_per_direction is not None:
            text = f"{label}: {what}; a ring along one torus axis gets {_g(bw / 1e9)} GB/s each way"
        else:
            bidir = acc.link_bw_bidir or 2 * bw
            text = f"{label}: {what}, {_g(bidir / 1e9)} GB/s bidirectional per GPU, so {_g(bw / 1e9)} GB/s each way"
            if acc.peer_bw_per_direction and acc.domain_size:
                # A point-to-point mesh (no switch): what one peer gets is a different figure.
                text += (f"; no switch: a direct connection to each of its {acc.domain_size - 1} peers, "
                         f"{_g(acc.peer_bw_per_direction / 1e9)} GB/s each way per peer")
        return Fact(name, text, bw)
    if figure == "sms":
        count = ceilings.sm_count
        if count is None:
            raise GivenError(f"{acc.id} has no SM or CU count in the catalog")
        kind = "compute units (CUs)" if ceilings.compute_unit_kind == "CU" else "SMs"
        return Fact(name, f"{label}: {count} {kind}", float(count))
    if figure == "net":
        net = ceilings.net_bw_per_direction
        if net is None:
            raise GivenError(f"{acc.id} has no scale-out network in the catalog")
        gbps = acc.raw.get("scale_out", {}).get("bw_gbps_per_direction")
        return Fact(name, f"{label}: scale-out network {_g(float(gbps))} Gb/s per GPU each way = {_g(net / 1e9)} GB/s", net)
    if figure == "domain":
        if acc.domain_size is None:
            raise GivenError(f"{acc.id} has no scale-up domain size in the catalog")
        return Fact(name, f"{label}: {acc.domain_size} GPUs in one scale-up domain ({acc.interconnect_domain or 'one box'})",
                    float(acc.domain_size))
    if figure == "l2":
        raw = [acc.raw.get(k) for k in ("l2_mb", "llc_mb")]
        sizes = [float(x) for x in raw if isinstance(x, (int, float)) and not isinstance(x, bool)]
        if not sizes:
            raise GivenError(f"{acc.id} has no cache size in the catalog")
        which = "last-level cache" if acc.raw.get("llc_mb") and max(sizes) == acc.raw.get("llc_mb") else "L2 cache"
        return Fact(name, f"{label}: {which} {_g(max(sizes))} MB, read as MiB", max(sizes) * 2**20)
    raise GivenError(f"unknown GPU figure '{figure}' (known: {', '.join(GPU_FIGURES)})")


# ---- models ----------------------------------------------------------------------------------

def _model_figures() -> dict[str, Callable[[Preset, ParamCounts], tuple[float, str]]]:
    def p(attr: str) -> Callable[[Preset, ParamCounts], float]:
        return lambda preset, counts: float(getattr(preset.params, attr))

    def text(fmt: str, attr: str) -> Callable[[Preset, ParamCounts], tuple[float, str]]:
        return lambda preset, counts: (p(attr)(preset, counts), fmt.format(int(getattr(preset.params, attr))))

    return {
        "layers": text("{} layers", "layers"),
        "hidden": text("hidden size d = {}", "hidden"),
        "heads": text("{} query heads", "heads"),
        "kv_heads": text("{} KV heads (grouped-query attention)", "kv_heads"),
        "head_dim": text("head dimension {}", "head_dim"),
        "vocab": text("vocabulary of {} tokens", "vocab"),
        "intermediate": text("MLP inner size {} (gated MLP: three d x inner matrices)", "intermediate"),
        "experts": text("{} routed experts per MoE layer", "experts"),
        "active_experts": text("{} routed experts per token", "active_experts"),
        "shared_experts": text("{} shared expert(s) per MoE layer", "shared_experts"),
        "kv_rank": text("MLA latent size d_c = {} per layer", "mla_kv_rank"),
        "rope_dim": text("MLA decoupled RoPE key size d_R = {} per layer", "mla_rope_dim"),
        "sliding_window": text("sliding window of {} tokens", "sliding_window"),
        "max_positions": text("declares at most {} positions (max_position_embeddings in its config.json)", "max_position_embeddings"),
        "sliding_layers": text("{} of its layers use the sliding window (the others attend to every token)", "sliding_layers"),
        "moe_layers": lambda preset, counts: (float(counts.moe_layers), f"{counts.moe_layers} MoE layers"),
        "params": lambda preset, counts: (float(counts.total), f"{_big(counts.total)} parameters in all"),
        "active": lambda preset, counts: (
            float(counts.active),
            f"{_big(counts.active)} parameters multiply each token (input embedding excluded, lm_head included)",
        ),
        "embedding": lambda preset, counts: (
            float(counts.embedding),
            f"input embedding table vocab x d = {_big(counts.embedding)} parameters (a lookup: a token reads one row of d)",
        ),
        "lm_head": lambda preset, counts: (float(counts.lm_head), f"lm_head d x vocab = {_big(counts.lm_head)} parameters"),
        "expert": lambda preset, counts: (float(counts.expert), f"one expert: {_big(counts.expert)} parameters"),
        "non_expert": lambda preset, counts: (
            float(counts.non_expert),
            f"{_big(counts.non_expert)} parameters outside the routed experts (attention, norms, router, shared experts, "
            "embedding, lm_head)",
        ),
    }


MODEL_FIGURES = tuple(_model_figures())


def _model_fact(preset: Preset, figure: str, name: str) -> Fact:
    table = _model_figures()
    if figure not in table:
        raise GivenError(f"unknown model figure '{figure}' (known: {', '.join(table)})")
    value, text = table[figure](preset, preset.params.counts())
    return Fact(name, f"{preset.name}: {text}", value)


# ---- compute capabilities --------------------------------------------------------------------

CC_FIGURES: dict[str, str] = {
    "registers_per_sm": "{} 32-bit registers per SM",
    "max_registers_per_thread": "at most {} registers per thread",
    "register_allocation_unit": "registers are given to a warp in units of {} (per warp)",
    "max_warps_per_sm": "at most {} resident warps per SM",
    "max_blocks_per_sm": "at most {} resident blocks per SM",
    "max_threads_per_block": "at most {} threads per block",
    "warp_size": "{} threads per warp",
    "sub_partitions": "the register file is split into {} equal slices, and each warp's registers come from one slice",
    "shared_memory_per_sm": "{} B of shared memory per SM at the largest carve-out",
    "shared_memory_per_block_optin": "{} B of shared memory per block at most (with the opt-in above 48 KiB)",
    "reserved_shared_memory_per_block": "{} B of shared memory reserved per block by the system",
    "shared_memory_granularity": "shared memory is allocated per block in units of {} B",
}


def _cc_fact(cc: ComputeCapability, figure: str, name: str) -> Fact:
    if figure not in CC_FIGURES:
        raise GivenError(f"unknown compute-capability figure '{figure}' (known: {', '.join(CC_FIGURES)})")
    value = int(getattr(cc, figure))
    return Fact(name, f"compute capability {cc.cc} ({cc.architecture}): {CC_FIGURES[figure].format(value)}", float(value))


# ---- a variant's facts -----------------------------------------------------------------------

def facts(variant: Variant) -> list[Fact]:
    """Every figure the variant gives, in order. GivenError for a figure that cannot be read."""
    from studytui.calc.units import FieldError
    from studytui.practice.model import render

    out: list[Fact] = []
    for spec in variant.problem.given:
        ref = render(spec.ref, variant.values).strip()
        prefix = f"{spec.prefix}_" if spec.prefix else ""
        figures = tuple(render(f, variant.values) for f in spec.figures)
        try:
            if spec.source == "value":
                from studytui.practice.handcalc import evaluate

                number = evaluate(render(spec.value, variant.values), {})
                if isinstance(number, (bool, str)):
                    raise GivenError(f"given '{spec.name}': {spec.value!r} is not a number")
                out.append(Fact(spec.name, render(spec.text, variant.values), float(number)))
            elif spec.source == "gpu":
                out.extend(_gpu_facts(ref, figures, prefix))
            elif spec.source == "model":
                from studytui.calc.models import get_preset

                preset = get_preset(ref)
                out.extend(_model_fact(preset, f, prefix + f) for f in figures)
            else:
                from studytui.calc.occupancy import get_cc

                cc = get_cc(ref)
                out.extend(_cc_fact(cc, f, prefix + f) for f in figures)
        except FieldError as exc:
            raise GivenError(f"given {spec.source} {ref!r}: {exc}") from None
    return out


def _gpu_facts(ref: str, figures: tuple[str, ...], prefix: str) -> list[Fact]:
    from studytui.calc.ceilings import resolve_ceilings

    ceilings = resolve_ceilings(ref, "bf16", need=())
    acc = ceilings.accelerator
    if acc is None:  # (resolve_ceilings raises for an unknown id)
        raise GivenError(f"unknown GPU {ref!r}")
    return [_gpu_fact(acc, ceilings, f, prefix + f) for f in figures]


def env(found: list[Fact]) -> dict[str, Any]:
    return {f.name: f.value for f in found}


# ---- figures a slip is made of -----------------------------------------------------------------
# A problem's `slips` may name, besides its given figures, the figures a learner can wrongly pick
# up next to a given peak: the vendor's 2:4 sparse figure (sparse_<dtype>, twice the dense one on
# most sheets) and, for an fp64 tensor-core peak, the fp64 vector pipe's (vector_fp64). They are
# never shown and never enter a hand formula: they only size the slip a miss is checked against.

def _peak_figures(variant: Variant) -> list[tuple[str, str, str]]:
    """(gpu ref, prefix, dtype) for every peak figure the variant gives."""
    from studytui.practice.model import render

    out = []
    for spec in variant.problem.given:
        if spec.source != "gpu":
            continue
        prefix = f"{spec.prefix}_" if spec.prefix else ""
        for figure in (render(f, variant.values) for f in spec.figures):
            if figure.startswith("peak_"):
                out.append((render(spec.ref, variant.values).strip(), prefix, figure[len("peak_"):]))
    return out


def slip_figure_names(variant: Variant) -> set[str]:
    """The names `slip_figures` can define for this variant (whether or not the catalog has them)."""
    names = set()
    for _, prefix, dtype in _peak_figures(variant):
        names.add(f"{prefix}sparse_{dtype}")
        if dtype == "fp64":
            names.add(f"{prefix}vector_fp64")
    return names


def slip_figures(variant: Variant) -> dict[str, float]:
    """The sparse and vector-pipe figures next to the variant's given peaks, where the catalog has
    them (a GPU whose vendor prints no sparse figure has no sparse_<dtype>)."""
    from studytui.calc.ceilings import resolve_ceilings
    from studytui.calc.dtypes import peak_keys

    out: dict[str, float] = {}
    for ref, prefix, dtype in _peak_figures(variant):
        acc = resolve_ceilings(ref, "bf16", need=()).accelerator
        if acc is None:
            continue
        key = next((k for k in peak_keys(dtype) if k in acc.peak_flops), None)
        if key is None:
            continue
        sparse = acc.peak_flops_sparse.get(key)
        if sparse:
            out[f"{prefix}sparse_{dtype}"] = sparse
        if key == "fp64_tensor" and acc.peak_flops.get("fp64"):
            out[f"{prefix}vector_fp64"] = acc.peak_flops["fp64"]
    return out
