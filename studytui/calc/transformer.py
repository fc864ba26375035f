"""Transformer inference cost: parameters, FLOPs, bytes, KV cache, time bounds, memory fit.

Conventions (docs/calculators.md, "Conventions"): 2 FLOPs per multiply-add everywhere; the lm_head is
counted; attention FLOPs that grow with context are explicit (4·n_q·H per attended token per
layer for MHA/GQA); weights are read once per step; the KV cache is read once per decode step;
the time lower bound is max(compute, memory, communication); their sum is the serial (no-overlap)
estimate, not a bound: real kernels can be slower still.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Mapping

from studytui.calc.dtypes import STORAGE_DTYPES, block_format, dtype_bytes
from studytui.calc.forms import (
    MEM_FRACTION,
    QUANT_FIELDS,
    CalcSpec,
    DataDir,
    FieldSpec,
    PlotPoint,
    ceilings_for,
    gpu_fields,
    model_fields,
    resolve_model,
)
from studytui.calc.kv import check_context_limit
from studytui.calc.kv import kv_cache as kv_cache  # the KV cache calculator (studytui.calc.kv), still importable from here
from studytui.calc.result import Result
from studytui.calc.roofline import TERMS_HEADLINE, TERMS_SHORT_LABELS, RooflineTerms, add_terms, g
from studytui.calc.units import (
    FieldError,
    format_count,
    format_flops,
    format_size,
    format_time,
)
from studytui.core.records import FrozenRecord

if TYPE_CHECKING:
    from studytui.calc.ceilings import Ceilings
    from studytui.calc.models import ModelParams

PHASES = ("prefill", "decode")


def weight_bytes_per_param(weight_dtype: str, quant_group: int = 128, scale_bytes: float = 2.0) -> float:
    """Storage per weight. A block-scaled format (nvfp4, mxfp4, mxfp8, ...) carries the scale its
    layout fixes; a plain sub-byte format one scale of `scale_bytes` per `quant_group` weights."""
    if block_format(weight_dtype) is not None:
        return dtype_bytes(weight_dtype)
    base = dtype_bytes(weight_dtype)
    if base < 1.0:
        return base + scale_bytes / quant_group
    return base


def uses_group_scale(weight_dtype: str) -> bool:
    """Whether --quant-group / --quant-scale-bytes apply: plain sub-byte formats only."""
    return block_format(weight_dtype) is None and dtype_bytes(weight_dtype) < 1.0


def explain_weight_format(result: Result, weight_dtype: str, quant_group: int, quant_scale_bytes: float) -> None:
    """Say how the weight bytes were counted: a block layout with its source, or a group scale."""
    fmt = block_format(weight_dtype)
    if fmt is not None:
        result.assume(f"{fmt.layout()} (source: {fmt.source})")
    elif uses_group_scale(weight_dtype):
        bits = (dtype_bytes(weight_dtype) + quant_scale_bytes / quant_group) * 8
        result.assume(
            f"{weight_dtype} weights carry a {g(quant_scale_bytes)}-byte scale per {quant_group} weights: {g(bits)} bits per weight "
            "(--quant-group, --quant-scale-bytes; a block-scaled format such as nvfp4 or mxfp4 fixes its own)"
        )


def expected_experts(experts: int, active: int, tokens: float) -> float:
    """Distinct experts a batch of `tokens` touches in one layer: E·(1 − (1 − K/E)^tokens)."""
    if experts <= 0:
        return 0.0
    untouched: float = (1.0 - active / experts) ** tokens  # the share of experts no token picks
    return experts * (1.0 - untouched)


def attention_pairs(tokens: int, window: float | None, causal: bool) -> float:
    """(query, key) pairs one sequence of `tokens` computes in prefill for one layer."""
    w = tokens if not window else min(tokens, window)
    if not causal:
        return float(tokens) * w
    if w >= tokens:
        return tokens * tokens / 2.0  # halve the T^2 term
    # causal with a window W < T: sum over positions of min(i, W)
    return w * w / 2.0 + (tokens - w) * w


def check_tp(params: ModelParams, tp: int) -> str | None:
    """Refuse a tensor-parallel degree that cannot split the heads; say when KV heads are replicated."""
    if tp < 1:
        raise FieldError("tp", f"must be at least 1 (got {tp})")
    if tp == 1:
        return None
    if params.heads % tp:
        raise FieldError(
            "tp", f"{tp} does not divide the {params.heads} query heads of {params.name}: tensor parallelism splits whole heads"
        )
    if params.is_mla:
        return None
    kv = params.kv_heads
    if tp <= kv:
        if kv % tp:
            raise FieldError("tp", f"{tp} does not divide the {kv} KV heads of {params.name}")
        return None
    if tp % kv:
        raise FieldError(
            "tp", f"the {kv} KV heads of {params.name} cannot be replicated evenly over {tp} GPUs (TP must be a multiple of {kv})"
        )
    return f"TP {tp} > {kv} KV heads: each KV head (and its cache) is replicated on {tp // kv} GPUs"


def shard_kv(params: ModelParams, tp: int) -> int:
    """How many ways tensor parallelism splits the KV cache (MLA's latent is replicated)."""
    if params.is_mla:
        return 1
    return min(tp, params.kv_heads)


# A plain class, not a dataclass or a typed named tuple: on Python 3.11 their generated code costs up to
# a millisecond each time this module is imported (studytui.core.records, issue 27).
class Layout(FrozenRecord):
    """How one model step is spread over GPUs.

    Attention, the dense MLPs and the shared experts are tensor-parallel over `tp` GPUs; with
    expert parallelism (`ep` > 1) the routed experts are spread whole over `ep` GPUs, which are
    `dp` = ep / tp copies of the tensor-parallel group (EP = TP x DP, as DeepSeek-V3 and vLLM
    deploy it), each running its share of the batch. Without EP the experts are tensor-sliced
    like every other weight.
    """

    __slots__ = ("tp", "ep", "dp", "replicated", "extra_params_per_gpu", "kv_projection_copies")

    tp: int
    ep: int
    dp: int
    replicated: tuple[tuple[str, int], ...]  # (what, parameters) every TP rank holds whole
    extra_params_per_gpu: float  # parameters a GPU holds beyond its 1/TP share (replication)
    kv_projection_copies: int  # TP > KV heads: GPUs holding each KV head's projections

    def __init__(
        self,
        tp: int,
        ep: int,
        dp: int,
        replicated: tuple[tuple[str, int], ...],
        extra_params_per_gpu: float,
        kv_projection_copies: int = 1,
    ) -> None:
        object.__setattr__(self, "tp", tp)
        object.__setattr__(self, "ep", ep)
        object.__setattr__(self, "dp", dp)
        object.__setattr__(self, "replicated", replicated)
        object.__setattr__(self, "extra_params_per_gpu", extra_params_per_gpu)
        object.__setattr__(self, "kv_projection_copies", kv_projection_copies)

    @property
    def gpus(self) -> int:
        return self.tp * self.dp

    @property
    def expert_split(self) -> int:
        return self.ep if self.ep > 1 else self.tp

    @property
    def replicated_params(self) -> int:
        return sum(n for _, n in self.replicated)


def parallel_layout(params: ModelParams, tp: int, ep: int = 1, batch: int = 1) -> Layout:
    """The layout for --tp and --ep; refuses an EP degree that cannot split the experts."""
    if ep < 1:
        raise FieldError("ep", f"must be at least 1 (got {ep})")
    if ep > 1:
        if not params.is_moe:
            raise FieldError("ep", f"{params.name} is dense: expert parallelism needs a mixture of experts (give --experts)")
        if params.experts % ep:
            raise FieldError(
                "ep", f"{ep} does not divide the {params.experts} routed experts of {params.name}: each GPU holds a whole number of them"
            )
        if ep % tp:
            raise FieldError(
                "ep", f"EP {ep} is not a multiple of TP {tp}: the EP GPUs are EP/TP copies of the tensor-parallel attention group "
                "(EP = TP x DP)"
            )
        dp = ep // tp
        if batch % dp:
            raise FieldError(
                "batch", f"batch {batch} does not split evenly over the {dp} data-parallel attention groups of EP {ep} / TP {tp}"
            )
    else:
        dp = 1
    if tp == 1:
        return Layout(tp, ep, dp, (), 0.0)
    replicated = params.replicated_under_tp()
    rep = sum(n for _, n in replicated)
    extra = rep - rep / tp
    kv_proj, copies = params.kv_projection_params(), 1
    if kv_proj and tp > params.kv_heads:
        # Each GPU holds one KV head's projections whole: 1/kv_heads of them, not 1/TP.
        extra += kv_proj / params.kv_heads - kv_proj / tp
        copies = tp // params.kv_heads
    return Layout(tp, ep, dp, replicated, extra, copies)


def describe_layout(result: Result, layout: Layout, params: ModelParams, bytes_per_weight: float) -> None:
    """The rows and assumptions that say how the model is spread and what is replicated."""
    tp, ep, dp = layout.tp, layout.ep, layout.dp
    result.values.update(tp=tp, ep=ep, dp=dp, gpus=layout.gpus)
    if ep > 1:
        per_gpu = params.experts // ep
        result.values["experts_per_gpu"] = per_gpu
        attention = f"attention TP {tp}" + (f" x DP {dp}" if dp > 1 else "")
        result.row(
            "parallelism", f"{layout.gpus} GPUs: {attention}; experts EP {ep} ({per_gpu} of {params.experts} routed experts per GPU)"
        )
        result.assume(
            f"EP {ep}: each GPU holds {per_gpu} whole routed experts; attention, dense MLPs and shared experts are tensor-parallel over "
            f"TP {tp}" + (f" in {dp} data-parallel copies, each running batch / {dp}" if dp > 1 else "")
            + " (EP = TP x DP, as DeepSeek-V3 deploys it, arXiv 2412.19437 section 3.4)"
        )
    if tp == 1 or layout.extra_params_per_gpu == 0:
        return
    named = list(layout.replicated)
    total = layout.replicated_params
    extra_bytes = layout.extra_params_per_gpu * bytes_per_weight
    result.values.update(
        replicated_params=total, replicated_extra_bytes_per_gpu=extra_bytes,
        replicated=[{"what": what, "params": n} for what, n in named],
    )
    parts = [f"{what}: {format_count(n)}" for what, n in named]
    if layout.kv_projection_copies > 1:
        parts.append(f"each KV head's K/V projections, on the {layout.kv_projection_copies} GPUs that hold the head")
    held = [f"{format_count(total)} params on every TP rank"] if total else []
    if layout.kv_projection_copies > 1:
        held.append(f"K/V projections on {layout.kv_projection_copies} GPUs per KV head")
    result.row("replicated weights", f"{', '.join(held)}: +{format_size(extra_bytes)} per GPU")
    result.assume(
        f"TP {tp}: weights are split evenly except those every rank holds whole, as serving engines lay them out (vLLM): "
        + "; ".join(parts) + f"; together +{format_size(extra_bytes)} per GPU over an even split (RMSNorm weights, also whole on "
        "every rank, are left in the even split: under 0.01% of the weights)"
    )
    if params.is_moe:
        result.assume("the MoE router is counted at --weight-dtype; engines often keep it in 16- or 32-bit, a little more")


def weight_bytes_per_gpu(params: ModelParams, layout: Layout, bytes_per_weight: float) -> float:
    """Weight bytes one GPU holds: its 1/TP share of the non-expert weights plus what is
    replicated, and its share of the routed experts (1/EP whole experts, or a 1/TP slice)."""
    counts = params.counts()
    routed = counts.moe_layers * params.experts * counts.expert
    non_expert = counts.total - routed
    return (non_expert / layout.tp + layout.extra_params_per_gpu + routed / layout.expert_split) * bytes_per_weight


def memory_fit(
    result: Result,
    params: ModelParams,
    ceilings: Ceilings,
    *,
    weight_bytes_total: float,
    kv_per_sequence: float,
    batch: int,
    context: int,
    tp: int,
    mem_fraction: float,
    weights_per_gpu: float | None = None,
    dp: int = 1,
) -> None:
    """Weights + KV against usable HBM per GPU; the largest batch at this context.

    weights_per_gpu: what one GPU holds (default: an even 1/TP split of weight_bytes_total);
    dp: data-parallel attention groups, each holding the KV cache of batch / dp sequences."""
    if ceilings.memory_bytes is None:
        result.assume("memory fit left out: custom ceilings carry no memory capacity (give --hbm, or --gpu)")
        return
    shard = shard_kv(params, tp)
    weights_gpu = weight_bytes_total / tp if weights_per_gpu is None else weights_per_gpu
    kv_seq_gpu = kv_per_sequence / shard
    kv_gpu = batch / dp * kv_seq_gpu
    usable = ceilings.memory_bytes * mem_fraction
    need = weights_gpu + kv_gpu
    fits = need <= usable
    max_batch = dp * max(0, math.floor((usable - weights_gpu) / kv_seq_gpu)) if kv_seq_gpu > 0 else None
    result.values.update(
        memory_bytes=ceilings.memory_bytes, usable_memory_bytes=usable, weight_bytes_per_gpu=weights_gpu,
        kv_bytes_per_gpu=kv_gpu, memory_needed_bytes=need, fits=fits, max_batch=max_batch,
        memory_headroom_bytes=usable - need,
    )
    result.step(
        f"usable HBM per GPU = {format_size(ceilings.memory_bytes, binary=True)} x {g(mem_fraction)} = {format_size(usable, binary=True)}"
    )
    if weights_per_gpu is None:
        weights_text = f"weights {format_size(weight_bytes_total)} / TP {tp} = {format_size(weights_gpu)}"
    else:
        weights_text = f"weights {format_size(weights_gpu)} (of {format_size(weight_bytes_total)}; split and replicated as above)"
    sequences = f"batch / {dp}" if dp > 1 else "batch"
    result.step(
        f"per GPU: {weights_text}; KV = {sequences} x KV/sequence / {shard} = "
        f"{batch}{f' / {dp}' if dp > 1 else ''} x {format_size(kv_per_sequence)} / {shard} = {format_size(kv_gpu)}"
    )
    result.step(f"fits = weights + KV <= usable: {format_size(need)} <= {format_size(usable)} -> {'yes' if fits else 'NO'}")
    if max_batch is not None:
        result.step(
            f"max batch at context {context} = {f'{dp} x ' if dp > 1 else ''}floor((usable - weights) / KV per sequence) = "
            f"{f'{dp} x ' if dp > 1 else ''}floor(({g(usable)} - {g(weights_gpu)}) / {g(kv_seq_gpu)}) = {max_batch}"
        )
    if weights_gpu != weight_bytes_total:  # split over GPUs
        result.row("weights per GPU", format_size(weights_gpu))
    result.row("memory per GPU", f"{format_size(need)} of {format_size(usable)} usable -> {'fits' if fits else 'DOES NOT FIT'}")
    if max_batch is not None:
        result.row(f"max batch at context {context:,}", format_count(max_batch))
    result.assume(f"usable memory = {g(mem_fraction)} x HBM (the rest for activations, CUDA context, fragmentation)")
    memory_from = ceilings.provenance.get("memory", "")
    if not memory_from.startswith(("override", "device-reported")):
        result.assume("vendor 'GB' memory capacity read as GiB (HBM sizes are binary: an H200 '141GB' reports 140.4 GiB)")
    if weights_gpu > usable:
        result.warn("the weights alone do not fit in usable HBM per GPU at this TP degree")
    elif not fits:
        result.warn(f"weights + KV need {format_size(need)} per GPU but only {format_size(usable)} is usable: reduce batch or context")


def transformer(
    params: ModelParams,
    ceilings: Ceilings,
    *,
    phase: str = "decode",
    batch: int = 1,
    prompt: int | None = None,
    context: int | None = None,
    weight_dtype: str = "bf16",
    kv_dtype: str = "bf16",
    act_dtype: str = "bf16",
    tp: int = 1,
    causal: bool = True,
    quant_group: int = 128,
    quant_scale_bytes: float = 2.0,
    latency: float = 1e-6,
    mfu: float = 1.0,
    mbu: float = 1.0,
    mem_fraction: float = 0.9,
    ep: int = 1,
    all_reduce: str = "auto",
) -> Result:
    """One prefill (the whole prompt batch) or one decode step (one token for every sequence).

    tp: tensor-parallel GPUs; ep: expert-parallel GPUs (MoE), EP = TP x DP (see Layout)."""
    params.validate()
    if phase not in PHASES:
        raise FieldError("phase", f"unknown phase {phase!r}; accepted: {', '.join(PHASES)}")
    if phase == "prefill" and not prompt:
        raise FieldError("prompt", "prefill needs --prompt T (prompt tokens per sequence)")
    if phase == "decode" and not context:
        raise FieldError("context", "decode needs --context S (tokens already in the KV cache per sequence)")
    if ceilings.peak_flops is None or ceilings.mem_bw is None:
        raise FieldError("gpu", "transformer inference needs a peak FLOP/s and a memory bandwidth")
    peak_flops, mem_bw = ceilings.peak_flops, ceilings.mem_bw
    replication = check_tp(params, tp)
    layout = parallel_layout(params, tp, ep, batch)
    if tp > 1 and ceilings.link_bw_per_direction is None:
        raise FieldError("link_bw", "tensor parallelism needs a link bandwidth: a --gpu with a scale-up link, or --link-bw (per direction)")
    if ep > 1 and ceilings.link_bw_per_direction is None:
        raise FieldError("link_bw", "expert parallelism needs a link bandwidth: a --gpu with a scale-up link, or --link-bw (per direction)")
    result = Result("transformer")
    if replication:
        result.assume(replication)
    counts = params.counts()
    d, L, B = params.hidden, params.layers, batch
    b_w = weight_bytes_per_param(weight_dtype, quant_group, quant_scale_bytes)
    b_kv, b_a = dtype_bytes(kv_dtype), dtype_bytes(act_dtype)
    kv_tok = params.kv_bytes_per_token(b_kv)
    dq, dv = params.attention_dims(phase)

    result.values.update(
        model=params.name, gpu=ceilings.accelerator.id if ceilings.accelerator else None, phase=phase, batch=B,
        prompt=prompt if phase == "prefill" else None, context=context if phase == "decode" else None,
        dtype=ceilings.dtype, weight_dtype=weight_dtype, kv_dtype=kv_dtype, act_dtype=act_dtype, tp=tp,
        total_params=counts.total, active_params=counts.active,
        active_params_with_embedding=counts.active_with_embedding, kv_bytes_per_token=kv_tok,
        weight_bytes_per_param=b_w,
    )
    result.row("model", params.name)
    result.row("ceilings", ceilings.gpu_label + (f" x {layout.gpus} GPUs" if layout.dp > 1 else f" x TP {tp}" if tp > 1 else ""))
    if params.is_moe:  # only a mixture of experts has an "active" count worth a second number
        result.row("parameters (total / active)", f"{format_count(counts.total)} / {format_count(counts.active)}")
    else:
        result.row("parameters", format_count(counts.total))
    if params.sliding_layers:  # the first figure counts every layer; past the window only the full ones grow
        result.row(
            "KV cache per token",
            f"{format_size(kv_tok)} ({kv_dtype}, all {L} layers; {format_size(params.kv_bytes_per_token_marginal(b_kv))} past the "
            f"{params.sliding_window}-token window)",
        )
    else:
        result.row("KV cache per token", f"{format_size(kv_tok)} ({kv_dtype})")
    result.step(
        f"parameters: total {g(counts.total)}, active per token {g(counts.active)} "
        f"(routed experts {params.active_experts} of {params.experts}; input embedding excluded, lm_head included)"
        if params.is_moe
        else f"parameters: total {g(counts.total)}, per token {g(counts.active)} (input embedding excluded, lm_head included)"
    )
    if params.is_mla:
        result.step(
            f"KV bytes/token = L x (d_c + d_R) x b_kv = {L} x ({params.mla_kv_rank} + {params.mla_rope_dim}) x {g(b_kv)} = {g(kv_tok)}"
        )
    else:
        result.step(
            f"KV bytes/token = 2 x L x n_kv x H x b_kv = 2 x {L} x {params.kv_heads} x {params.head_dim} x {g(b_kv)} = {g(kv_tok)}"
        )

    heads = params.heads
    if phase == "decode":
        assert context is not None  # (required for decode: checked above)
        S = context
        tokens = B
        linear_flops = 2.0 * counts.active * B
        result.step(f"linear FLOPs = 2 x active params x batch = 2 x {g(counts.active)} x {B} = {g(linear_flops)}")
        attention_flops = 0.0
        for n_layers, attended in params.attended(S):
            part = 2.0 * heads * (dq + dv) * attended * B * n_layers
            attention_flops += part
            result.step(
                f"attention FLOPs = 2 x n_q x (d_qk + d_v) x attended x batch x layers = 2 x {heads} x ({dq} + {dv}) x {g(attended)} x "
                f"{B} x {n_layers} = {g(part)}"
            )
        tokens_for_experts = B
        kv_read = B * params.kv_bytes_per_sequence(S, b_kv)
        kv_write = B * kv_tok
        result.step(f"KV read = batch x KV bytes/sequence at context {S} = {B} x {g(params.kv_bytes_per_sequence(S, b_kv))} = {g(kv_read)}")
        result.step(f"KV write = batch x KV bytes/token = {B} x {g(kv_tok)} = {g(kv_write)}")
    else:
        assert prompt is not None  # (required for prefill: checked above)
        T = prompt
        tokens = B * T
        body = counts.active - counts.lm_head
        linear_flops = 2.0 * body * tokens + 2.0 * counts.lm_head * B
        result.step(
            f"linear FLOPs = 2 x (active - lm_head) x batch x prompt + 2 x lm_head x batch = 2 x {g(body)} x {tokens} + 2 x "
            f"{g(counts.lm_head)} x {B} = {g(linear_flops)}"
        )
        attention_flops = 0.0
        for n_layers, window in ((params.layers - params.sliding_layers, None), (params.sliding_layers, params.sliding_window)):
            if n_layers == 0:
                continue
            pairs = attention_pairs(T, window, causal)
            part = 2.0 * heads * (dq + dv) * pairs * B * n_layers
            attention_flops += part
            shape = "T^2/2 (causal)" if causal else "T^2 (full square, --no-causal)"
            if window:
                shape = f"window {window}, " + ("causal" if causal else "T x min(T, W)")
            result.step(
                f"attention FLOPs = 2 x n_q x (d_qk + d_v) x pairs x batch x layers, pairs = {shape} = {g(pairs)}: 2 x {heads} x ({dq} + "
                f"{dv}) x {g(pairs)} x {B} x {n_layers} = {g(part)}"
            )
        tokens_for_experts = tokens
        kv_write = B * params.kv_bytes_per_sequence(T, b_kv)
        kv_read = kv_write
        result.step(f"KV written once and read once by attention = batch x KV bytes/sequence at {T} = {g(kv_write)} each")
        result.assume("prefill: logits (lm_head) computed for the last prompt token of each sequence only, as serving engines do")
        result.values["attention"] = "causal" if causal else "bidirectional"
        result.row("prefill attention", "causal: half the T^2 scores (a causal kernel skips the masked half)" if causal
                   else "bidirectional: the full T^2 scores (--no-causal)")
        result.assume(
            "prefill attention counts the full T^2 score matrix (--no-causal: bidirectional attention)"
            if not causal
            else "prefill attention is causal (the default): half the T^2 score matrix, "
            "as FlashAttention and serving engines skip the masked half"
        )

    # Weights read once per step: every non-expert weight, the experts the tokens touch.
    if params.tied_embeddings:
        non_expert = counts.non_expert
    else:
        non_expert = counts.non_expert - counts.embedding + min(tokens, params.vocab) * d
    experts_touched = expected_experts(params.experts, params.active_experts, tokens_for_experts) if params.is_moe else 0.0
    expert_weights = params.moe_layers * experts_touched * counts.expert
    weight_bytes = (non_expert + expert_weights) * b_w
    if params.is_moe:
        result.values["expected_experts_per_layer"] = experts_touched
        result.step(
            f"experts touched per MoE layer = E(1 - (1 - K/E)^tokens) = {params.experts} x (1 - (1 - "
            f"{params.active_experts}/{params.experts})^{tokens_for_experts}) = {g(experts_touched)}"
        )
        result.row("experts touched per MoE layer", f"{g(experts_touched)} of {params.experts}")
    result.step(
        f"weight bytes = (non-expert weights + MoE layers x experts touched x expert size) x bytes/weight = ({g(non_expert)} + "
        f"{g(expert_weights)}) x {g(b_w)} = {g(weight_bytes)}"
    )
    act_bytes = 2.0 * d * b_a * L * tokens
    result.step(f"activation bytes = 2 x d x b_a x L x tokens = 2 x {d} x {g(b_a)} x {L} x {tokens} = {g(act_bytes)}")
    result.assume("activations: the hidden state written and read once per layer; other intermediates assumed fused or on-chip")

    flops = linear_flops + attention_flops
    total_bytes = weight_bytes + kv_read + kv_write + act_bytes
    kv_shard = shard_kv(params, tp)
    dp, gpus, e_split = layout.dp, layout.gpus, layout.expert_split
    routed_flops = 2.0 * params.moe_layers * params.active_experts * counts.expert * tokens_for_experts if params.is_moe else 0.0
    tokens_group = tokens / dp  # the tokens one tensor-parallel group (one data-parallel copy) runs
    extra = layout.extra_params_per_gpu  # replicated weights: held and multiplied by every TP rank
    # Attention heads and weights are split over the TP group, routed experts over EP (or TP); what
    # is replicated is computed by every rank. The hidden state is replicated on every TP rank
    # (each reads and writes all of it).
    flops_gpu = (flops - routed_flops) / dp / tp + 2.0 * extra * tokens_group + routed_flops / e_split
    weight_bytes_gpu = (non_expert / tp + extra) * b_w + expert_weights * b_w / e_split
    bytes_gpu = weight_bytes_gpu + act_bytes / dp + (kv_read + kv_write) / dp / kv_shard
    if gpus > 1:
        split_text = f"/ DP {dp} / TP {tp}" if dp > 1 else f"/ TP {tp}"
        result.step(
            f"per GPU: FLOPs = non-routed {split_text} + 2 x replicated params x tokens + routed / {e_split} = {g(flops_gpu)}; bytes = "
            f"weights ({g(non_expert)} / {tp} + {g(extra)} replicated + {g(expert_weights)} routed / {e_split}) x {g(b_w)} + "
            f"activations{f' / {dp}' if dp > 1 else ''} (replicated in the TP group) + KV {f'/ {dp} ' if dp > 1 else ''}/ {kv_shard} "
            f"= {g(bytes_gpu)}"
        )
        result.values.update(flops_per_gpu=flops_gpu, bytes_per_gpu=bytes_gpu, weight_bytes_read_per_gpu=weight_bytes_gpu)
        if tp > 1:
            result.assume("TP: activations (the hidden state) are replicated on every rank, so their traffic is not divided by TP")
        if kv_shard < tp:
            result.assume(
                "KV cache is replicated across TP ranks beyond the KV-head count" if not params.is_mla
                else "MLA's latent KV cache is replicated on every TP rank"
            )
    describe_layout(result, layout, params, b_w)
    peak = peak_flops * mfu
    bw = mem_bw * mbu
    if mfu != 1.0 or mbu != 1.0:
        result.step(
            f"effective peak = peak x MFU = {g(peak_flops)} x {g(mfu)} = {g(peak)}; bandwidth = bw x MBU = {g(mem_bw)} "
            f"x {g(mbu)} = {g(bw)}"
        )
        result.warn(f"MFU {g(mfu)} / MBU {g(mbu)} applied: the times are estimates, no longer lower bounds")
    terms = RooflineTerms(flops_gpu, bytes_gpu, peak, bw)
    result.values.update(
        linear_flops=linear_flops, attention_flops=attention_flops, weight_bytes=weight_bytes,
        kv_read_bytes=kv_read, kv_write_bytes=kv_write, activation_bytes=act_bytes,
        flops_total=flops, bytes_total=total_bytes,
    )
    if gpus > 1:
        result.row("FLOPs total (TP group)" if dp == 1 else f"FLOPs total ({gpus} GPUs)", format_flops(flops))
        result.row("bytes total (TP group)" if dp == 1 else f"bytes total ({gpus} GPUs)", format_size(total_bytes))
    add_terms(result, terms, "per-GPU" if gpus > 1 else "", per_gpu=gpus > 1)
    time_s, upper, bound = terms.time_s, terms.time_serial_s, terms.bound

    comm = 0.0
    if tp > 1:
        message = tokens_group * d * b_a
        fabric = ceilings.fabric(gpus=tp)
        from studytui.calc.collective import collective  # the one collective model (algorithm picked by size)

        try:
            hier = collective("all_reduce", tp, message, latency=latency, fabric=fabric, algorithm=all_reduce)
        except FieldError as exc:
            field = {"gpus": "tp", "algorithm": "all_reduce"}.get(exc.field, exc.field)
            raise FieldError(field, exc.message.replace("GPUs exceed", "TP GPUs exceed").replace("--algorithm", "--all-reduce")) from None
        per_ar = hier.values["time_s"]
        result.values["tp_all_reduce_algorithm"] = hier.values["algorithm"]
        for warning in hier.warnings:  # (NVLS: a bound far above what is measured)
            result.warn(f"TP all-reduce ({hier.values['algorithm']}): {warning}")
        if hier.values["hierarchical"]:
            result.step(
                f"TP all-reduce per call ({hier.values['algorithm']}), {tp} GPUs past the {fabric.domain}-GPU scale-up domain: inside "
                f"{format_time(hier.values['scale_up_time_s'])}, across {format_time(hier.values['network_time_s'])}, "
                f"+ {hier.values['steps']} x {format_time(latency)} latency = {format_time(per_ar)} (bottleneck: "
                f"{hier.values['bottleneck']})"
            )
            result.values["tp_bottleneck"] = hier.values["bottleneck"]
            result.warn(f"TP {tp} spans more than one {fabric.domain}-GPU scale-up domain: its all-reduces cross the network "
                        f"(bottleneck: {hier.values['bottleneck']})")
        else:
            result.step(
                f"TP all-reduce per call ({hier.values['algorithm']}, the collective calculator's choice at {format_size(message)}) = "
                f"{format_time(hier.values['bandwidth_time_s'])} bandwidth + {hier.values['steps']} steps x {format_time(latency)} = "
                f"{format_time(per_ar)}"
            )
        group = min(tp, fabric.domain) if fabric.domain else tp
        if fabric.measured_gpus and fabric.measured_gpus != group:
            result.warn(
                f"the measured link figure comes from a {fabric.measured_gpus}-GPU all-reduce; applied here to TP {tp}: measure at this "
                "size"
            )
        elif fabric.measured_note:
            result.assume(fabric.measured_note)
        # With EP the routed experts' MLP needs no TP all-reduce (the all-to-all combines it).
        n_ar = 2 * L if ep == 1 else L + params.dense_layers + (params.moe_layers if params.shared_experts else 0)
        comm = n_ar * per_ar
        result.values.update(all_reduce_bytes=message, all_reduce_time_s=per_ar, all_reduces=n_ar, tp_comm_time_s=comm)
        if ep == 1:
            result.step(f"communication = 2 all-reduces x L layers x per call = 2 x {L} x {format_time(per_ar)} = {format_time(comm)}")
            result.row("TP all-reduce per layer", f"2 x {format_size(message)} -> {format_time(2 * per_ar)} ({hier.values['algorithm']})")
            result.assume(
                "TP: two all-reduces of tokens x d activations per layer (after attention and after the MLP; Megatron), each costed "
                "by the collective calculator's algorithm for its size"
            )
        else:
            result.step(
                f"TP communication = (L attention + {params.dense_layers} dense MLP"
                + (f" + {params.moe_layers} shared-expert" if params.shared_experts else "")
                + f") all-reduces x per call = {n_ar} x {format_time(per_ar)} = {format_time(comm)}"
            )
            result.row("TP all-reduces per step", f"{n_ar} x {format_size(message)} -> {format_time(comm)}")
            result.assume(
                "TP with EP: one all-reduce of the group's tokens x d after attention in every layer, and after the dense MLPs"
                + (" and the shared experts" if params.shared_experts else "") + "; the routed experts' outputs return by all-to-all"
            )
        result.assume(
            f"all-reduce latency {format_time(latency)} per step of its algorithm (default 1 us: an order-of-magnitude assumption; "
            "measure it with nccl-tests); NVLS instead costs NCCL's tuner figure per call (25 us inside an NVLink domain), so small "
            "all-reduces run as a ring or tree"
        )
    if ep > 1:
        comm += _expert_all_to_all(result, params, ceilings, ep=ep, tokens=tokens, act_bytes=b_a, latency=latency)
    if gpus > 1:
        result.values["comm_time_s"] = comm
        result.step(
            f"time lower bound = max(compute, memory, communication) = {format_time(max(time_s, comm))}; serial no-overlap estimate = sum "
            f"= {format_time(upper + comm)}"
        )
        result.row("communication time", format_time(comm))
        if comm > time_s:
            bound = "communication"
        time_s, upper = max(time_s, comm), upper + comm
        result.values.update(time_s=time_s, time_serial_s=upper, bound=bound)
        result.row("time lower bound (with comms)", format_time(time_s))
        result.row("bound (with comms)", "communication (it takes longer than the compute and memory floors)" if bound == "communication"
                   else f"{bound} (communication fits under it when overlapped)")
        result.row("serial estimate (with comms)", format_time(upper))

    tokens_per_s = tokens / time_s
    result.values["tokens_per_s"] = tokens_per_s
    if phase == "decode":
        result.values["tpot_s"] = time_s
        result.step(f"tokens/s upper bound = batch / step time = {B} / {format_time(time_s)} = {g(tokens_per_s)}")
        result.row("TPOT lower bound (one step)", format_time(time_s))
        result.row("tokens/s upper bound", f"{g(tokens_per_s)} ({g(tokens_per_s / B)} per sequence)")
        result.assume(
            f"decode: one step with {context} tokens already cached per sequence; a whole generation averages steps over growing contexts"
        )
        if params.is_mla:
            result.assume("MLA decode in the compressed space (absorbed weights): scores over d_c + d_R, values over d_c per head")
    else:
        result.values["ttft_s"] = time_s
        result.step(f"prefill tokens/s = batch x prompt / time = {tokens} / {format_time(time_s)} = {g(tokens_per_s)}")
        result.row("TTFT lower bound", format_time(time_s))
        result.row("prefill tokens/s upper bound", g(tokens_per_s))
        if params.is_mla:
            result.assume("MLA prefill with K and V decompressed per head (scores over nope + rope dims, values over v_dim)")
    if params.sliding_layers:
        result.assume(
            f"{params.sliding_layers} of {L} layers use a {params.sliding_window}-token sliding window (attend to and cache at most that "
            "many tokens)"
        )
    if params.is_moe:
        result.assume("MoE: experts touched per layer from uniform independent routing, E(1-(1-K/E)^tokens); FLOPs use K experts per token")
    explain_weight_format(result, weight_dtype, quant_group, quant_scale_bytes)
    result.assume(f"FLOPs use the dense {ceilings.dtype} peak; 2 FLOPs per multiply-add")
    _explain_precisions(result, weight_dtype, ceilings.dtype)
    if tp > 1 and ep == 1:
        result.assume(
            f"TP {tp}: weights, FLOPs and activation traffic split over the GPUs (what is replicated, as listed); tokens/s is for the "
            "whole TP group"
        )
    elif ep > 1:
        result.assume(f"EP {ep}: tokens/s is for all {layout.gpus} GPUs together")
    for line in ceilings.describe():
        result.assume(line)
    for w in ceilings.warnings:
        result.warn(w)

    fit_context = S if phase == "decode" else T
    check_context_limit(result, params, fit_context + (1 if phase == "decode" else 0),
                        "context (cached tokens + the new one)" if phase == "decode" else "prompt")
    memory_fit(
        result, params, ceilings, weight_bytes_total=counts.total * b_w,
        kv_per_sequence=params.kv_bytes_per_sequence(fit_context + (1 if phase == "decode" else 0), b_kv),
        batch=B, context=fit_context, tp=tp, mem_fraction=mem_fraction,
        weights_per_gpu=weight_bytes_per_gpu(params, layout, b_w) if layout.gpus > 1 else None, dp=layout.dp,
    )
    return result


def _expert_all_to_all(
    result: Result, params: ModelParams, ceilings: Ceilings, *, ep: int, tokens: float, act_bytes: float, latency: float
) -> float:
    """EP's communication: a dispatch and a combine all-to-all per MoE layer, timed by the
    collective model (studytui.calc.collective); returns their time per step."""
    from studytui.calc.collective import collective

    k, d = params.active_experts, params.hidden
    per_gpu_tokens = tokens / ep
    message = per_gpu_tokens * k * d * act_bytes  # what each GPU sends (nccl-tests all_to_all size)
    fabric = ceilings.fabric(gpus=ep)
    try:
        a2a = collective("all_to_all", ep, message, latency=latency, fabric=fabric)
    except FieldError as exc:
        raise FieldError("ep" if exc.field == "gpus" else exc.field, exc.message.replace("GPUs", "EP GPUs", 1)) from None
    per_call = float(a2a.values["time_s"])
    calls = 2 * params.moe_layers
    comm = calls * per_call
    result.values.update(
        all_to_all_bytes=message, all_to_all_time_s=per_call, all_to_alls=calls, ep_comm_time_s=comm,
        all_to_all_bottleneck=a2a.values.get("bottleneck"),
    )
    result.step(
        f"EP all-to-all per call ({ep} GPUs) = each GPU's tokens x K x d x b_a = {g(per_gpu_tokens)} x {k} x {d} x {g(act_bytes)} = "
        f"{g(message)} bytes -> {format_time(per_call)} (collective model, bottleneck: {a2a.values.get('bottleneck')})"
    )
    result.step(
        f"EP communication = dispatch + combine x {params.moe_layers} MoE layers = {calls} x {format_time(per_call)} = {format_time(comm)}"
    )
    result.row("EP all-to-alls per step", f"{calls} x {format_size(message)} -> {format_time(comm)}")
    result.assume(
        f"EP: the tokens reach their experts' GPUs and come back in two all-to-alls per MoE layer (dispatch and combine), each GPU "
        f"sending its 1/{ep} of the tokens, {k} copies each (one per routed expert, remote or not), in --act-dtype; routing assumed "
        "uniform, so every GPU sends and computes the same share"
    )
    for note in a2a.assumptions:
        if note.startswith("all-to-all"):
            result.assume(note)
        elif note.startswith(("torus", "catalog")):
            result.assume(f"all-to-all: {note}")
    for warning in a2a.warnings:
        result.warn(f"EP all-to-all: {warning}")
    if fabric.domain is not None and ep > fabric.domain:
        result.warn(f"EP {ep} spans more than one {fabric.domain}-GPU scale-up domain: its all-to-alls cross the network "
                    f"(bottleneck: {a2a.values.get('bottleneck')})")
        result.assume(
            "EP across domains: every routed copy is counted on the network; node-limited routing and per-node forwarding (DeepSeek-V3 "
            "sends a token to at most 4 nodes and fans it out over NVLink there, arXiv 2412.19437 sections 2.1.2 and 3.2.2) send less"
        )
    return comm


def _explain_precisions(result: Result, weight_dtype: str, compute_dtype: str) -> None:
    """Say what a weight precision that differs from the math precision means (and when it cannot be)."""
    if weight_dtype == compute_dtype:
        return
    fmt = block_format(weight_dtype)
    if fmt is not None and fmt.base == compute_dtype:
        result.assume(
            f"{weight_dtype} weights feed {compute_dtype} math with their block scales: tensor cores with block-scaled MMA "
            "(NVIDIA Blackwell, AMD CDNA 4) apply the scales inside the instruction; elsewhere a kernel applies them first"
        )
        return
    w, c = dtype_bytes(fmt.base if fmt else weight_dtype), dtype_bytes(compute_dtype)
    if w < c:
        result.assume(
            f"weight-only quantisation: {weight_dtype} weights are read at {g(w * 8)} bits and dequantised to {compute_dtype} "
            f"in the kernel; the math runs at the {compute_dtype} rate"
        )
    elif w == c:
        result.assume(
            f"{weight_dtype} weights with {compute_dtype} math: the same storage size; the time uses the {compute_dtype} peak "
            f"(give --dtype {weight_dtype} for the {weight_dtype} peak where it differs)"
        )
    else:
        result.warn(
            f"{compute_dtype} math needs {compute_dtype} operands: {weight_dtype} weights would first have to be quantised to "
            f"{compute_dtype}; this reads {g(w * 8)}-bit weights but computes at the {compute_dtype} rate, which no kernel does as is "
            f"(give --weight-dtype {compute_dtype} for a {compute_dtype} model)"
        )


# ---- the calculator ------------------------------------------------------------------------

EP_FIELD = FieldSpec(
    "ep", "expert parallel GPUs", "int", "1",
    help="MoE: spread the routed experts whole over N GPUs (N divides the experts; N = TP x data-parallel attention copies)",
)

# The rows memory_fit writes (here and in studytui.calc.memory): the headline ones, and a
# shorter label for narrow terminals.
FIT_HEADLINE = ("memory per GPU", "max batch")
FIT_SHORT_LABELS = ((r"^max batch at context (\S+)$", r"max batch @\1"),)


def _run(p: dict[str, Any], data_dir: DataDir) -> Result:
    params = resolve_model(p)
    parallel = p["tp"] > 1 or p["ep"] > 1
    need = ("peak_flops", "mem_bw") + (("link_bw",) if parallel else ())
    ceilings = ceilings_for(p, data_dir, need)
    domain = ceilings.accelerator.domain_size if ceilings.accelerator else None
    widest = max(p["tp"], p["ep"])
    if parallel and "net_bw" in (p.get("_given") or ()) and (domain is None or widest <= domain):
        group = f"EP {p['ep']}" if p["ep"] > p["tp"] else f"TP {p['tp']}"
        where = f"{group} fits in one {domain}-GPU scale-up domain" if domain else "no scale-up domain is known for these ceilings"
        raise FieldError("net_bw", f"is not used: {where}; the network carries TP and EP traffic only past the domain")
    return transformer(
        params, ceilings, phase=p["phase"], batch=p["batch"], prompt=p["prompt"], context=p["context"],
        weight_dtype=p["weight_dtype"], kv_dtype=p["kv_dtype"], act_dtype=p["act_dtype"], tp=p["tp"],
        causal=bool(p["causal"]), quant_group=p["quant_group"], quant_scale_bytes=p["quant_scale_bytes"],
        latency=p["latency"], mfu=p["mfu"], mbu=p["mbu"], mem_fraction=p["mem_fraction"], ep=p["ep"],
        all_reduce=p.get("all_reduce") or "auto",
    )


def _unused(p: dict[str, Any], given: frozenset[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    if p["phase"] == "prefill":
        out["context"] = "--phase prefill processes --prompt tokens; --context is for --phase decode"
    else:
        out["prompt"] = "--phase decode runs one step over --context cached tokens; --prompt is for --phase prefill"
        out["causal"] = "causal masking changes prefill attention only; a decode step attends to the whole cache"
    if p["tp"] == 1 and p["ep"] == 1:
        out["link_bw"] = "the link carries tensor- and expert-parallel traffic only; give --tp N or --ep N"
        out["latency"] = "the collective latency applies with --tp N or --ep N only"
    if p["tp"] == 1:
        out["all_reduce"] = "the TP all-reduce runs with --tp N only"
        out["net_bw"] = "the network carries tensor- and expert-parallel traffic only; give --tp N or --ep N"
    out.update(group_scale_unused(p["weight_dtype"]))
    return out


def group_scale_unused(weight_dtype: str) -> dict[str, str]:
    """--quant-group and --quant-scale-bytes are refused where the weight format leaves no choice."""
    fmt = block_format(weight_dtype)
    if fmt is not None:
        reason = f"{weight_dtype} fixes its own scale: one {fmt.scale} per {fmt.block} values"
    elif dtype_bytes(weight_dtype) >= 1:
        reason = f"group scales apply to sub-byte weight formats only (--weight-dtype is {weight_dtype})"
    else:
        return {}
    return {"quant_group": reason, "quant_scale_bytes": reason}


def _points(spec: CalcSpec, result: Result, values: Mapping[str, str], data_dir: DataDir) -> list[PlotPoint]:
    """Prefill and decode together on the roofline: the other phase is run through the same calculator."""
    phase = str(result.values.get("phase") or values.get("phase") or "decode")
    other_phase = "prefill" if phase == "decode" else "decode"
    other: Result | None
    try:
        other = spec.run({**values, "phase": other_phase}, data_dir)
    except Exception:  # the other phase may not run with these inputs: its point is left out
        other = None
    by_phase = {phase: result, other_phase: other}
    points: list[PlotPoint] = []
    for name in ("prefill", "decode"):
        r = by_phase.get(name)
        if r is not None and r.values.get("intensity") and r.values.get("attainable_flops"):
            mark = " (shown)" if name == phase else ""
            points.append((f"{name}{mark}", float(r.values["intensity"]), float(r.values["attainable_flops"])))
    return points


SPEC = CalcSpec(
    "transformer", "Transformer inference",
    "Parameters, FLOPs (2 per multiply-add, attention context terms, lm_head), bytes (weights once per step, "
    "KV cache, activations), KV bytes/token, and for one prefill or one decode step: compute, memory and TP "
    "communication times, the max() lower bound and the serial sum() estimate, tokens/s, TTFT/TPOT, and memory fit.",
    (
        *model_fields(),
        FieldSpec("phase", "phase", "choice", "decode", choices=("prefill", "decode"),
                  help="prefill: the whole prompt batch; decode: one step"),
        FieldSpec("batch", "batch (sequences)", "int", "1"),
        FieldSpec("prompt", "prompt tokens", "int", "2048", help="prefill: tokens per sequence"),
        FieldSpec("context", "context tokens", "int", "4096", help="decode: tokens already cached per sequence"),
        FieldSpec("weight_dtype", "weight precision", "dtype", "bf16", choices=STORAGE_DTYPES,
                  help="nvfp4, mxfp4, mxfp8, ...: block-scaled, their scales counted"),
        FieldSpec("kv_dtype", "KV precision", "dtype", "bf16", choices=STORAGE_DTYPES),
        FieldSpec("act_dtype", "activation precision", "dtype", "bf16", choices=STORAGE_DTYPES),
        *QUANT_FIELDS,
        FieldSpec("tp", "tensor parallel GPUs", "int", "1"),
        EP_FIELD,
        FieldSpec("latency", "collective step latency", "time", "1us", allow_zero=True,
                  help="per collective step (TP all-reduce, EP all-to-all)", group="more"),
        FieldSpec("all_reduce", "TP all-reduce algorithm", "choice", "auto", choices=("auto", "ring", "tree", "nvls"),
                  help="auto: the fastest at this size, as the collective calculator picks; or ring, tree, nvls", group="more"),
        FieldSpec("net_bw", "network bandwidth override", "rate",
                  help="scale-out network per GPU per direction, for --tp past the scale-up domain, e.g. 50GB/s", group="more"),
        FieldSpec("causal", "causal attention", "bool", "true",
                  help="prefill: a causal kernel skips the masked half of the T^2 scores (--no-causal: bidirectional, the full square)",
                  group="more"),
        FieldSpec("mfu", "MFU", "float", "1", maximum=1.0, help="fraction of peak FLOP/s reached (1 = lower bound)", group="more"),
        FieldSpec("mbu", "MBU", "float", "1", maximum=1.0, help="fraction of peak bandwidth reached (1 = lower bound)", group="more"),
        MEM_FRACTION,
        *gpu_fields(link=True, dtype_help="compute precision (its dense peak sets the compute time)"),
        FieldSpec("hbm", "HBM capacity override", "size", help="replaces the GPU's memory capacity, e.g. 141GiB", group="ceilings"),
    ),
    _run,
    renamed={"causal_half": ("causal", lambda v: v)},
    unused=_unused,
    ui_defaults={"model": "llama-3.1-8b"},
    headline=(*TERMS_HEADLINE, "TPOT", "tokens/s", *FIT_HEADLINE),
    short_labels=(
        *TERMS_SHORT_LABELS,
        (r"^time lower bound \(with comms\)$", "time bound +comms"),
        (r"^TPOT lower bound.*$", "TPOT bound"),
        (r"^tokens/s upper bound$", "tokens/s bound"),
        *FIT_SHORT_LABELS,
        (r"^serial estimate \(with comms\)$", "serial +comms"),
        (r"^parameters \(total / active\)$", "params tot/active"),
    ),
    short_name="transf",
    title_fields=("model", "phase"),
    plot="roofline",
    points=_points,
)
