"""The KV cache: bytes per token, per sequence and per batch (GQA, MQA, MLA, sliding windows)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from studytui.calc.dtypes import STORAGE_DTYPES, dtype_bytes
from studytui.calc.forms import CalcSpec, DataDir, FieldSpec, ceilings_for, model_fields, resolve_model
from studytui.calc.result import Result
from studytui.calc.roofline import g
from studytui.calc.units import format_count, format_percent, format_size

if TYPE_CHECKING:
    from studytui.calc.ceilings import Ceilings
    from studytui.calc.models import ModelParams


def check_context_limit(result: Result, params: ModelParams, tokens: int, what: str = "context") -> None:
    """Warn when `tokens` positions go past the context the model's config declares; record the limit."""
    limit = params.max_position_embeddings
    result.values["max_position_embeddings"] = limit or None
    if not limit:
        return
    if tokens > limit:
        result.warn(
            f"{what} {tokens:,} tokens is past {params.name}'s limit of {limit:,} (max_position_embeddings in its config.json): "
            "the model is not configured for positions past it, so these figures are arithmetic only"
        )


def kv_cache(
    params: ModelParams, *, kv_dtype: str = "bf16", batch: int = 1, context: int = 4096, ceilings: Ceilings | None = None
) -> Result:
    """KV cache size per token, per sequence and for a batch."""
    params.validate()
    result = Result("kv")
    b = dtype_bytes(kv_dtype)
    elements = params.kv_elements_per_token_per_layer()
    per_token = params.kv_bytes_per_token(b)
    marginal = params.kv_bytes_per_token_marginal(b)
    per_seq = params.kv_bytes_per_sequence(context, b)
    total = batch * per_seq
    mha = 2 * params.layers * params.heads * params.head_dim * b
    result.values.update(
        model=params.name, kv_dtype=kv_dtype, batch=batch, context=context,
        kv_elements_per_token_per_layer=elements, kv_bytes_per_token=per_token, kv_bytes_per_token_marginal=marginal,
        kv_bytes_per_sequence=per_seq, kv_bytes=total, bytes=total, mha_kv_bytes_per_token=mha,
        reduction_vs_mha=mha / per_token, time_s=None,
    )
    if params.is_mla:
        result.step(f"elements/token/layer = d_c + d_R = {params.mla_kv_rank} + {params.mla_rope_dim} = {elements}")
        groups = elements / (2 * params.head_dim)
        result.values["equivalent_gqa_groups"] = groups
        result.step(f"equivalent GQA groups at head dim {params.head_dim} = {elements} / (2 x {params.head_dim}) = {g(groups)}")
    else:
        result.step(f"elements/token/layer = 2 x n_kv x H = 2 x {params.kv_heads} x {params.head_dim} = {elements}")
    result.step(f"KV bytes/token = L x elements x b_kv = {params.layers} x {elements} x {g(b)} = {g(per_token)}")
    if params.sliding_layers:
        full, sliding, window = params.layers - params.sliding_layers, params.sliding_layers, params.sliding_window
        result.step(
            f"KV bytes per token past the {window}-token window = full layers x elements x b_kv = {full} x {elements} x {g(b)} = "
            f"{g(marginal)} (the {sliding} sliding layers keep at most {window} tokens)"
        )
        result.step(
            f"KV bytes/sequence at context {context} = (full layers x {context} + sliding layers x min({context}, {window})) x "
            f"elements x b_kv = ({full} x {context} + {sliding} x {min(context, window)}) x {elements} x {g(b)} = {g(per_seq)}"
        )
    else:
        result.step(f"KV bytes/sequence at context {context} = {g(per_seq)}")
    result.step(f"KV bytes for batch = {batch} x {g(per_seq)} = {g(total)}")
    result.step(
        f"MHA equivalent = 2 x L x n_q x H x b_kv = 2 x {params.layers} x {params.heads} x {params.head_dim} x {g(b)} = {g(mha)} "
        f"({g(mha / per_token)}x more)"
    )
    result.row("model", params.name)
    result.row("KV elements per token per layer", format_count(elements))
    if params.is_mla:  # after the model it describes
        result.row("equivalent GQA groups", g(result.values["equivalent_gqa_groups"]))
    if params.sliding_layers:
        full = params.layers - params.sliding_layers
        result.row(f"KV bytes per token (all {params.layers} layers)", format_size(per_token))
        result.row(
            "KV bytes per token past the window",
            f"{format_size(marginal)} ({full} full layers; the {params.sliding_layers} sliding ones stop at "
            f"{params.sliding_window} tokens)",
        )
    else:
        result.row("KV bytes per token", format_size(per_token))
    result.row(f"KV per sequence at {context:,} tokens", format_size(per_seq))
    result.row(f"KV for batch {batch}", f"{format_size(total)} ({format_size(total, binary=True)})")
    result.row("vs MHA", f"{format_size(mha)} per token ({g(mha / per_token)}x more)")
    if ceilings is not None and ceilings.memory_bytes:
        frac = total / ceilings.memory_bytes
        result.values["fraction_of_memory"] = frac
        result.row(f"share of {ceilings.accelerator.id if ceilings.accelerator else 'HBM'}", format_percent(frac))
        result.step(f"share of HBM = {g(total)} / {g(ceilings.memory_bytes)} = {format_percent(frac)}")
    result.assume("KV bytes scale with KV heads (GQA/MQA), not query heads; MLA caches one latent plus a RoPE key per layer")
    if params.sliding_layers:
        result.assume(
            f"'KV bytes per token' counts all {params.layers} layers, as for the first {params.sliding_window} tokens; past the window "
            f"the {params.sliding_layers} sliding layers stop growing, so each further token adds only the full layers' share"
        )
    check_context_limit(result, params, context)
    return result


# ---- the calculator ------------------------------------------------------------------------

# "KV per sequence at N tokens" (kv_cache, memory_plan) on a narrow terminal.
KV_SEQUENCE_SHORT_LABEL = (r"^KV per sequence at (\S+)( tokens)?$", r"KV per seq @\1")


def _run(p: dict[str, Any], data_dir: DataDir) -> Result:
    params = resolve_model(p)
    ceilings = ceilings_for(p, data_dir, ()) if (p.get("gpu") or p.get("hbm")) else None
    return kv_cache(params, kv_dtype=p["kv_dtype"], batch=p["batch"], context=p["context"], ceilings=ceilings)


SPEC = CalcSpec(
    "kv", "KV cache",
    "KV cache bytes per token, per sequence and per batch (GQA, MQA, MLA, sliding windows).",
    (
        *model_fields(),
        FieldSpec("kv_dtype", "KV precision", "dtype", "bf16", choices=STORAGE_DTYPES),
        FieldSpec("batch", "batch (sequences)", "int", "1"),
        FieldSpec("context", "context tokens", "int", "4096"),
        FieldSpec("gpu", "GPU", "gpu", help="optional: show the share of its HBM"),
        FieldSpec("hbm", "HBM capacity override", "size", help="instead of a GPU's memory capacity, e.g. 80GiB", group="ceilings"),
    ),
    _run,
    ui_defaults={"model": "llama-3.1-8b"},
    headline=("KV for batch", "KV bytes per token"),
    short_labels=(KV_SEQUENCE_SHORT_LABEL,),
    title_fields=("model",),
)
