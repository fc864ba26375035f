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

from studytui.calc.collective import ring_all_reduce_time
from studytui.calc.dtypes import DTYPES, dtype_bytes
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

if TYPE_CHECKING:
    from studytui.calc.ceilings import Ceilings
    from studytui.calc.models import ModelParams

PHASES = ("prefill", "decode")


def weight_bytes_per_param(weight_dtype: str, quant_group: int = 128, scale_bytes: float = 2.0) -> float:
    """Storage per weight: sub-byte formats carry one scale of `scale_bytes` per `quant_group` weights."""
    base = dtype_bytes(weight_dtype)
    if base < 1.0:
        return base + scale_bytes / quant_group
    return base


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
) -> None:
    """Weights + KV against usable HBM per GPU; the largest batch at this context."""
    if ceilings.memory_bytes is None:
        result.assume("memory fit left out: custom ceilings carry no memory capacity (give --hbm, or --gpu)")
        return
    shard = shard_kv(params, tp)
    weights_gpu = weight_bytes_total / tp
    kv_seq_gpu = kv_per_sequence / shard
    kv_gpu = batch * kv_seq_gpu
    usable = ceilings.memory_bytes * mem_fraction
    need = weights_gpu + kv_gpu
    fits = need <= usable
    max_batch = max(0, math.floor((usable - weights_gpu) / kv_seq_gpu)) if kv_seq_gpu > 0 else None
    result.values.update(
        memory_bytes=ceilings.memory_bytes, usable_memory_bytes=usable, weight_bytes_per_gpu=weights_gpu,
        kv_bytes_per_gpu=kv_gpu, memory_needed_bytes=need, fits=fits, max_batch=max_batch,
        memory_headroom_bytes=usable - need,
    )
    result.step(
        f"usable HBM per GPU = {format_size(ceilings.memory_bytes, binary=True)} x {g(mem_fraction)} = {format_size(usable, binary=True)}"
    )
    result.step(
        f"per GPU: weights {format_size(weight_bytes_total)} / TP {tp} = {format_size(weights_gpu)}; KV = batch x KV/sequence / {shard} = "
        f"{batch} x {format_size(kv_per_sequence)} / {shard} = {format_size(kv_gpu)}"
    )
    result.step(f"fits = weights + KV <= usable: {format_size(need)} <= {format_size(usable)} -> {'yes' if fits else 'NO'}")
    if max_batch is not None:
        result.step(
            f"max batch at context {context} = floor((usable - weights) / KV per sequence) = floor(({g(usable)} - {g(weights_gpu)}) / "
            f"{g(kv_seq_gpu)}) = {max_batch}"
        )
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
) -> Result:
    """One prefill (the whole prompt batch) or one decode step (one token for every sequence)."""
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
    if tp > 1 and ceilings.link_bw_per_direction is None:
        raise FieldError("link_bw", "tensor parallelism needs a link bandwidth: a --gpu with a scale-up link, or --link-bw (per direction)")
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
    result.row("ceilings", ceilings.gpu_label + (f" x TP {tp}" if tp > 1 else ""))
    if params.is_moe:  # only a mixture of experts has an "active" count worth a second number
        result.row("parameters (total / active)", f"{format_count(counts.total)} / {format_count(counts.active)}")
    else:
        result.row("parameters", format_count(counts.total))
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
    flops_gpu = flops / tp
    # The hidden state is replicated on every TP rank (each reads and writes all of it); weights
    # and attention heads are split.
    bytes_gpu = weight_bytes / tp + act_bytes + (kv_read + kv_write) / kv_shard
    if tp > 1:
        result.step(
            f"per GPU: FLOPs / TP = {g(flops)} / {tp} = {g(flops_gpu)}; bytes = weights / {tp} + activations (replicated) + KV / "
            f"{kv_shard} = {g(bytes_gpu)}"
        )
        result.values.update(flops_per_gpu=flops_gpu, bytes_per_gpu=bytes_gpu)
        result.assume("TP: activations (the hidden state) are replicated on every rank, so their traffic is not divided by TP")
        if kv_shard < tp:
            result.assume(
                "KV cache is replicated across TP ranks beyond the KV-head count" if not params.is_mla
                else "MLA's latent KV cache is replicated on every TP rank"
            )
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
    if tp > 1:
        result.row("FLOPs total (TP group)", format_flops(flops))
        result.row("bytes total (TP group)", format_size(total_bytes))
    add_terms(result, terms, "per-GPU" if tp > 1 else "", per_gpu=tp > 1)
    time_s, upper, bound = terms.time_s, terms.time_serial_s, terms.bound

    if tp > 1:
        message = tokens * d * b_a
        fabric = ceilings.fabric(gpus=tp)
        if fabric.domain is not None and tp > fabric.domain:
            from studytui.calc.collective import collective

            try:
                hier = collective("all_reduce", tp, message, latency=latency, fabric=fabric)
            except FieldError as exc:
                raise FieldError("tp" if exc.field == "gpus" else exc.field, exc.message.replace("GPUs exceed", "TP GPUs exceed")) from None
            per_ar = hier.values["time_s"]
            result.step(
                f"TP all-reduce per call, {tp} GPUs past the {fabric.domain}-GPU scale-up domain (hierarchical): inside "
                f"{format_time(hier.values['scale_up_time_s'])}, across {format_time(hier.values['network_time_s'])}, "
                f"+ {hier.values['steps']} x {format_time(latency)} latency = {format_time(per_ar)} (bottleneck: "
                f"{hier.values['bottleneck']})"
            )
            result.values["tp_bottleneck"] = hier.values["bottleneck"]
            result.warn(f"TP {tp} spans more than one {fabric.domain}-GPU scale-up domain: its all-reduces cross the network "
                        f"(modelled hierarchically; bottleneck: {hier.values['bottleneck']})")
        else:
            per_ar, bw_part = ring_all_reduce_time(message, tp, fabric.link_bw, latency)
            result.step(
                f"TP all-reduce (ring) per call = 2(N-1)/N x M / link + 2(N-1) x latency = 2x{tp - 1}/{tp} x {g(message)} / "
                f"{g(fabric.link_bw)} + {2 * (tp - 1)} x {format_time(latency)} = {format_time(per_ar)}"
            )
        group = min(tp, fabric.domain) if fabric.domain else tp
        if fabric.measured_gpus and fabric.measured_gpus != group:
            result.warn(
                f"the measured link figure comes from a {fabric.measured_gpus}-GPU all-reduce; applied here to TP {tp}: measure at this "
                "size"
            )
        elif fabric.measured_note:
            result.assume(fabric.measured_note)
        comm = 2 * L * per_ar
        result.values.update(all_reduce_bytes=message, all_reduce_time_s=per_ar, comm_time_s=comm)
        result.step(f"communication = 2 all-reduces x L layers x per call = 2 x {L} x {format_time(per_ar)} = {format_time(comm)}")
        result.step(
            f"time lower bound = max(compute, memory, communication) = {format_time(max(time_s, comm))}; serial no-overlap estimate = sum "
            f"= {format_time(upper + comm)}"
        )
        result.row("TP all-reduce per layer", f"2 x {format_size(message)} -> {format_time(2 * per_ar)}")
        result.row("communication time", format_time(comm))
        result.assume(
            "TP: two all-reduces of tokens x d activations per layer (after attention and after the MLP), at the one-way link rate "
            "(Megatron)"
        )
        result.assume(
            f"all-reduce latency {format_time(latency)} per ring step (default 1 us: an order-of-magnitude assumption; measure it with "
            "nccl-tests)"
        )
        if comm > time_s:
            bound = "communication"
        time_s, upper = max(time_s, comm), upper + comm
        result.values.update(time_s=time_s, time_serial_s=upper, bound=bound)
        result.row("time lower bound (with comms)", format_time(time_s))
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
    if b_w != dtype_bytes(weight_dtype):
        result.assume(
            f"{weight_dtype} weights carry a {g(quant_scale_bytes)}-byte scale per {quant_group} weights: {g(b_w * 8)} bits per weight"
        )
    result.assume(f"FLOPs use the dense {ceilings.dtype} peak; 2 FLOPs per multiply-add")
    _explain_precisions(result, weight_dtype, ceilings.dtype)
    if tp > 1:
        result.assume(f"TP {tp}: weights, FLOPs and activation traffic split evenly over the GPUs; tokens/s is for the whole TP group")
    for line in ceilings.describe():
        result.assume(line)
    for w in ceilings.warnings:
        result.warn(w)

    fit_context = S if phase == "decode" else T
    memory_fit(
        result, params, ceilings, weight_bytes_total=counts.total * b_w,
        kv_per_sequence=params.kv_bytes_per_sequence(fit_context + (1 if phase == "decode" else 0), b_kv),
        batch=B, context=fit_context, tp=tp, mem_fraction=mem_fraction,
    )
    return result


def _explain_precisions(result: Result, weight_dtype: str, compute_dtype: str) -> None:
    """Say what a weight precision that differs from the math precision means (and when it cannot be)."""
    if weight_dtype == compute_dtype:
        return
    w, c = dtype_bytes(weight_dtype), dtype_bytes(compute_dtype)
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

# The rows memory_fit writes (here and in studytui.calc.memory): the headline ones, and a
# shorter label for narrow terminals.
FIT_HEADLINE = ("memory per GPU", "max batch")
FIT_SHORT_LABELS = ((r"^max batch at context (\S+)$", r"max batch @\1"),)


def _run(p: dict[str, Any], data_dir: DataDir) -> Result:
    params = resolve_model(p)
    need = ("peak_flops", "mem_bw") + (("link_bw",) if p["tp"] > 1 else ())
    ceilings = ceilings_for(p, data_dir, need)
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


def _unused(p: dict[str, Any], given: frozenset[str]) -> dict[str, str]:
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
        FieldSpec("weight_dtype", "weight precision", "dtype", "bf16", choices=DTYPES),
        FieldSpec("kv_dtype", "KV precision", "dtype", "bf16", choices=DTYPES),
        FieldSpec("act_dtype", "activation precision", "dtype", "bf16", choices=DTYPES),
        *QUANT_FIELDS,
        FieldSpec("tp", "tensor parallel GPUs", "int", "1"),
        FieldSpec("latency", "all-reduce step latency", "time", "1us", allow_zero=True, help="per ring step", group="more"),
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
