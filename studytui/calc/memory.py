"""Memory fit: what fits in HBM, weights + KV per GPU, the largest batch at a context and the
longest context at a batch."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from studytui.calc.dtypes import STORAGE_DTYPES, dtype_bytes
from studytui.calc.forms import (
    MEM_FRACTION,
    QUANT_FIELDS,
    CalcSpec,
    DataDir,
    FieldSpec,
    ceilings_for,
    model_fields,
    resolve_model,
)
from studytui.calc.kv import KV_SEQUENCE_SHORT_LABEL, check_context_limit
from studytui.calc.result import Result
from studytui.calc.roofline import g
from studytui.calc.transformer import (
    EP_FIELD,
    FIT_HEADLINE,
    FIT_SHORT_LABELS,
    check_tp,
    describe_layout,
    explain_weight_format,
    group_scale_unused,
    memory_fit,
    parallel_layout,
    shard_kv,
    weight_bytes_per_gpu,
    weight_bytes_per_param,
)
from studytui.calc.units import FieldError, format_count, format_size

if TYPE_CHECKING:
    from studytui.calc.ceilings import Ceilings
    from studytui.calc.models import ModelParams


def memory_plan(
    params: ModelParams,
    ceilings: Ceilings,
    *,
    weight_dtype: str = "bf16",
    kv_dtype: str = "bf16",
    batch: int = 1,
    context: int = 4096,
    tp: int = 1,
    quant_group: int = 128,
    quant_scale_bytes: float = 2.0,
    mem_fraction: float = 0.9,
    ep: int = 1,
) -> Result:
    """What fits in HBM: weights + KV per GPU, largest batch at this context, longest context at this batch.

    tp: tensor-parallel GPUs; ep: expert-parallel GPUs (MoE), EP = TP x DP (transformer.Layout)."""
    params.validate()
    replication = check_tp(params, tp)
    layout = parallel_layout(params, tp, ep, batch)
    result = Result("memory")
    if replication:
        result.assume(replication)
    counts = params.counts()
    b_w = weight_bytes_per_param(weight_dtype, quant_group, quant_scale_bytes)
    weights = counts.total * b_w
    weights_gpu = weight_bytes_per_gpu(params, layout, b_w)
    dp = layout.dp
    b_kv = dtype_bytes(kv_dtype)
    per_seq = params.kv_bytes_per_sequence(context, b_kv)
    result.values.update(
        model=params.name, gpu=ceilings.accelerator.id if ceilings.accelerator else None, weight_dtype=weight_dtype,
        kv_dtype=kv_dtype, batch=batch, context=context, tp=tp, total_params=counts.total,
        weight_bytes=weights, kv_bytes_per_token=params.kv_bytes_per_token(b_kv), kv_bytes_per_sequence=per_seq,
        bytes=weights + batch * per_seq, time_s=None,
    )
    result.row("model", params.name)
    if ceilings.memory_bytes is not None:
        result.row(
            "HBM per GPU",
            f"{format_size(ceilings.memory_bytes, binary=True)} ({ceilings.provenance.get('memory', '')})"
            + (f" x {layout.gpus} GPUs" if dp > 1 else f" x TP {tp}" if tp > 1 else ""),
        )
    result.step(f"weights = params x bytes/weight = {g(counts.total)} x {g(b_w)} = {g(weights)}")
    result.step(f"KV per sequence at {context} tokens = {g(per_seq)}")
    result.row("weights", f"{format_size(weights)} ({format_size(weights, binary=True)})")
    result.row(f"KV per sequence at {context:,} tokens", format_size(per_seq))
    if ceilings.memory_bytes is None:
        raise FieldError("gpu", "memory planning needs a GPU with a memory capacity (--gpu)")
    describe_layout(result, layout, params, b_w)
    memory_fit(result, params, ceilings, weight_bytes_total=weights, kv_per_sequence=per_seq, batch=batch,
               context=context, tp=tp, mem_fraction=mem_fraction,
               weights_per_gpu=weights_gpu if layout.gpus > 1 else None, dp=dp)
    # Longest context for this batch (full-attention layers grow without bound; sliding ones cap),
    # then no longer than the model's own limit.
    usable = ceilings.memory_bytes * mem_fraction
    room = usable - weights_gpu
    shard = shard_kv(params, tp)
    per_gpu_batch = batch / dp
    limit = params.max_position_embeddings
    label = f"max context at batch {batch}"
    if room > 0:
        lo, hi = 0, 1
        while hi < 1 << 40 and per_gpu_batch * params.kv_bytes_per_sequence(hi, b_kv) / shard <= room:
            hi *= 2
        by_memory: int | None
        if hi >= 1 << 40:
            by_memory = None
        else:
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if per_gpu_batch * params.kv_bytes_per_sequence(mid, b_kv) / shard <= room:
                    lo = mid
                else:
                    hi = mid
            by_memory = lo
        sequences = f"batch / {dp}" if dp > 1 else "batch"
        result.step(f"max context by memory at batch {batch}: largest S with {sequences} x KV(S) / {shard} <= {g(room)} -> {by_memory}")
        result.values["max_context_by_memory"] = by_memory
        if limit and (by_memory is None or by_memory > limit):
            max_context: int | None = limit
            memory_text = (
                "sliding windows only, memory sets no limit" if by_memory is None else f"memory would hold {format_count(by_memory)}"
            )
            result.row(label, f"{format_count(limit)} (the model's limit; {memory_text})")
            result.step(f"max context = min(memory, the model's max_position_embeddings {limit}) = {limit}")
        else:
            max_context = by_memory
            result.row(label, "unbounded (sliding windows only)" if max_context is None else format_count(max_context))
        result.values["max_context"] = max_context
    else:
        result.values["max_context"] = 0
        result.values["max_context_by_memory"] = 0
    if limit:
        result.assume(
            f"{params.name} declares at most {limit:,} positions (max_position_embeddings in its config.json): contexts stop there"
        )
    else:
        result.assume("the model's context limit is not known (custom dims): the longest context is memory's alone")
    check_context_limit(result, params, context)
    for line in ceilings.describe():
        result.assume(line)
    explain_weight_format(result, weight_dtype, quant_group, quant_scale_bytes)
    return result


# ---- the calculator ------------------------------------------------------------------------

def _run(p: dict[str, Any], data_dir: DataDir) -> Result:
    params = resolve_model(p)
    ceilings = ceilings_for(p, data_dir, ())
    return memory_plan(
        params, ceilings, weight_dtype=p["weight_dtype"], kv_dtype=p["kv_dtype"], batch=p["batch"], context=p["context"],
        tp=p["tp"], quant_group=p["quant_group"], quant_scale_bytes=p["quant_scale_bytes"], mem_fraction=p["mem_fraction"],
        ep=p["ep"],
    )


def _unused(p: dict[str, Any], given: frozenset[str]) -> dict[str, str]:
    return group_scale_unused(p["weight_dtype"])


SPEC = CalcSpec(
    "memory", "Memory fit",
    "What fits in HBM: weights + KV per GPU, the largest batch at a context and the longest context at a batch.",
    (
        *model_fields(),
        FieldSpec("gpu", "GPU", "gpu", "h200", help="accelerator id or alias"),
        FieldSpec("weight_dtype", "weight precision", "dtype", "bf16", choices=STORAGE_DTYPES,
                  help="nvfp4, mxfp4, mxfp8, ...: block-scaled, their scales counted"),
        FieldSpec("kv_dtype", "KV precision", "dtype", "bf16", choices=STORAGE_DTYPES),
        *QUANT_FIELDS,
        FieldSpec("batch", "batch (sequences)", "int", "1"),
        FieldSpec("context", "context tokens", "int", "4096"),
        FieldSpec("tp", "GPUs (tensor parallel)", "int", "1"),
        EP_FIELD,
        MEM_FRACTION,
        FieldSpec("hbm", "HBM capacity override", "size", help="replaces the GPU's memory capacity, e.g. 141GiB", group="ceilings"),
    ),
    _run,
    unused=_unused,
    ui_defaults={"model": "llama-3.1-70b"},
    headline=FIT_HEADLINE,
    short_labels=(*FIT_SHORT_LABELS, KV_SEQUENCE_SHORT_LABEL),
    title_fields=("model",),
    short_name="mem",
)
