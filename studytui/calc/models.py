"""Transformer model shapes: presets from content/models/*.yaml, or custom dims.

Parameter counting follows the published Hugging Face configs: attention (GQA or MLA), a gated
(3-matrix) or plain (2-matrix) MLP, MoE layers with routed and shared experts and a router,
RMSNorm weights, input embedding and lm_head (unless tied).

Conventions:
- total_params: every weight of the model (MTP / draft modules excluded).
- active_params: weights a token multiplies by (routed experts counted K of E, shared experts,
  lm_head), WITHOUT the input embedding table, which is a lookup, not a matmul. This is the
  convention DeepSeek (36.6B + 0.9B head ~ 37B) and OpenAI (gpt-oss 5.1B) publish.
  `active_params_with_embedding` adds the table (Mistral's 12.9B for Mixtral counts it).
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from studytui.calc.units import FieldError
from studytui.core.errors import UsageError


@dataclass(frozen=True)
class ModelParams:
    layers: int
    hidden: int
    intermediate: int  # dense MLP inner size (dense layers; 0 if every layer is MoE)
    heads: int
    kv_heads: int
    head_dim: int
    vocab: int
    name: str = "custom"
    mlp_matrices: int = 3  # 3 = gated (SwiGLU: gate, up, down), 2 = plain (up, down)
    tied_embeddings: bool = False
    # Mixture of experts (experts = 0: dense model)
    experts: int = 0
    active_experts: int = 0
    shared_experts: int = 0
    moe_intermediate: int = 0
    dense_layers: int = 0  # leading dense layers in an MoE model (DeepSeek first_k_dense_replace)
    # Multi-head latent attention (mla_kv_rank = 0: ordinary MHA/GQA/MQA)
    mla_kv_rank: int = 0
    mla_rope_dim: int = 0
    mla_q_rank: int = 0  # 0: queries projected directly from the hidden state
    mla_nope_dim: int = 0  # 0: head_dim
    mla_v_dim: int = 0  # 0: head_dim
    # Sliding-window attention: `sliding_layers` of the layers attend to the last `sliding_window` tokens
    sliding_window: int = 0
    sliding_layers: int = 0
    # Small extras that only change parameter counts
    attention_bias: bool = False  # biases on q, k, v and o projections
    mlp_bias: bool = False  # biases on MLP / expert projections
    router_bias: bool = False  # a per-expert bias in the router
    qk_norm: bool = False  # RMSNorm on q and k per head (Qwen3)
    attention_sinks: bool = False  # one learned logit per head (gpt-oss)
    # The longest context the published config declares (config.json max_position_embeddings);
    # 0: not known (custom dims)
    max_position_embeddings: int = 0

    # ---- structure --------------------------------------------------------------------
    @property
    def is_moe(self) -> bool:
        return self.experts > 0

    @property
    def is_mla(self) -> bool:
        return self.mla_kv_rank > 0

    @property
    def moe_layers(self) -> int:
        return self.layers - self.dense_layers if self.is_moe else 0

    @property
    def nope_dim(self) -> int:
        return self.mla_nope_dim or self.head_dim

    @property
    def v_dim(self) -> int:
        return self.mla_v_dim or self.head_dim

    def validate(self) -> "ModelParams":
        """Raise FieldError naming the offending field."""
        for f in ("layers", "hidden", "heads", "kv_heads", "head_dim", "vocab"):
            value = getattr(self, f)
            if not isinstance(value, int) or value <= 0:
                raise FieldError(f, f"must be a whole number greater than zero (got {value!r})")
        if self.mlp_matrices not in (2, 3):
            raise FieldError("mlp_matrices", f"must be 2 or 3 (got {self.mlp_matrices})")
        if self.heads % self.kv_heads:
            raise FieldError("kv_heads", f"heads ({self.heads}) must be divisible by kv-heads ({self.kv_heads})")
        if self.is_moe:
            if not 0 < self.active_experts <= self.experts:
                raise FieldError("active_experts", f"must be between 1 and experts ({self.experts}); got {self.active_experts}")
            if self.moe_intermediate <= 0:
                raise FieldError("moe_intermediate", "an MoE model needs --moe-intermediate (each expert's inner size)")
            if not 0 <= self.dense_layers < self.layers:
                raise FieldError("dense_layers", f"must be between 0 and layers-1 ({self.layers - 1})")
            if self.dense_layers and self.intermediate <= 0:
                raise FieldError("intermediate", "dense layers need --intermediate")
        else:
            if self.active_experts or self.shared_experts:
                raise FieldError("experts", "give --experts E with --active-experts/--shared-experts")
            if self.intermediate <= 0:
                raise FieldError("intermediate", "must be a whole number greater than zero")
        if self.is_mla and self.mla_rope_dim <= 0:
            raise FieldError("mla_rope_dim", "MLA needs --mla-rope-dim (the decoupled RoPE key size, e.g. 64)")
        if not self.is_mla and (self.mla_rope_dim or self.mla_q_rank):
            raise FieldError("mla_kv_rank", "give --mla-kv-rank with the other MLA dims")
        if not isinstance(self.max_position_embeddings, int) or self.max_position_embeddings < 0:
            raise FieldError("max_position_embeddings", f"must be a whole number, 0 when not known (got {self.max_position_embeddings!r})")
        if self.sliding_layers:
            if self.sliding_layers > self.layers:
                raise FieldError("sliding_layers", f"must be at most layers ({self.layers})")
            if self.sliding_window <= 0:
                raise FieldError("sliding_window", "sliding layers need --sliding-window (tokens)")
        return self

    # ---- parameter counts -------------------------------------------------------------
    def attention_params(self) -> int:
        d, nq, nkv, h = self.hidden, self.heads, self.kv_heads, self.head_dim
        if self.is_mla:
            qk = self.nope_dim + self.mla_rope_dim
            if self.mla_q_rank:
                q = d * self.mla_q_rank + self.mla_q_rank + self.mla_q_rank * nq * qk
            else:
                q = d * nq * qk
            kv = d * (self.mla_kv_rank + self.mla_rope_dim) + self.mla_kv_rank
            kv += self.mla_kv_rank * nq * (self.nope_dim + self.v_dim)
            return q + kv + nq * self.v_dim * d
        params = d * nq * h + 2 * d * nkv * h + nq * h * d
        if self.attention_bias:
            params += nq * h + 2 * nkv * h + d
        if self.qk_norm:
            params += 2 * h
        if self.attention_sinks:
            params += nq
        return params

    def mlp_params(self, inner: int) -> int:
        params = self.mlp_matrices * self.hidden * inner
        if self.mlp_bias:
            params += (self.mlp_matrices - 1) * inner + self.hidden
        return params

    def router_params(self) -> int:
        return self.hidden * self.experts + (self.experts if self.router_bias else 0)

    def counts(self) -> "ParamCounts":
        d, v = self.hidden, self.vocab
        attention = self.attention_params()
        norms = 2 * d
        dense_mlp = self.mlp_params(self.intermediate) if self.intermediate > 0 else 0
        expert = self.mlp_params(self.moe_intermediate) if self.is_moe else 0
        shared = self.shared_experts * expert
        router = self.router_params() if self.is_moe else 0
        dense_layers = self.layers - self.moe_layers
        embedding = v * d
        lm_head = 0 if self.tied_embeddings else v * d
        per_dense_layer = attention + norms + dense_mlp
        per_moe_layer_fixed = attention + norms + router + shared  # read by every token
        total = (
            embedding + lm_head + d
            + dense_layers * per_dense_layer
            + self.moe_layers * (per_moe_layer_fixed + self.experts * expert)
        )
        active = (
            v * d + d  # the lm_head matmul (the tied embedding table when tied) and final norm
            + dense_layers * per_dense_layer
            + self.moe_layers * (per_moe_layer_fixed + self.active_experts * expert)
        )
        return ParamCounts(
            total=total,
            active=active,
            active_with_embedding=active + (embedding if not self.tied_embeddings else 0),
            embedding=embedding,
            lm_head=v * d,
            attention_per_layer=attention,
            dense_mlp_per_layer=dense_mlp,
            expert=expert,
            shared_per_layer=shared,
            router_per_layer=router,
            dense_layers=dense_layers,
            moe_layers=self.moe_layers,
            non_expert=total - self.moe_layers * self.experts * expert,
        )

    def replicated_under_tp(self) -> tuple[tuple[str, int], ...]:
        """Weights every tensor-parallel rank holds whole instead of a 1/TP slice, as serving
        engines lay them out (vLLM: the MLA down-projections are one fused layer built with
        `disable_tp=True`, the MoE router a `ReplicatedLinear`): (what, parameters) per group.
        RMSNorm weights are whole on every rank too but left out: under 0.01% of any preset."""
        d, L = self.hidden, self.layers
        groups: list[tuple[str, int]] = []
        if self.is_mla:
            width = self.mla_q_rank + self.mla_kv_rank + self.mla_rope_dim
            parts = "q_a + kv_a" if self.mla_q_rank else "kv_a"
            groups.append((
                f"MLA down-projections ({parts}, fused {width}x{d} per layer) and their norms",
                L * (d * width + self.mla_q_rank + self.mla_kv_rank),
            ))
        if self.is_moe:
            groups.append((f"MoE router ({d}x{self.experts} per MoE layer)", self.moe_layers * self.router_params()))
        return tuple(groups)

    def kv_projection_params(self) -> int:
        """The K and V projection weights of every layer (MHA/GQA/MQA; 0 for MLA)."""
        if self.is_mla:
            return 0
        per_layer = 2 * self.hidden * self.kv_heads * self.head_dim + (2 * self.kv_heads * self.head_dim if self.attention_bias else 0)
        return self.layers * per_layer

    # ---- attention and KV cache -------------------------------------------------------
    def kv_elements_per_token_per_layer(self) -> int:
        """Elements cached per token per layer: 2·n_kv·H (K and V), or d_c + d_R for MLA."""
        if self.is_mla:
            return self.mla_kv_rank + self.mla_rope_dim
        return 2 * self.kv_heads * self.head_dim

    def kv_bytes_per_token(self, kv_bytes: float) -> float:
        """Bytes cached per token over all layers (a sliding layer stores at most its window)."""
        return self.layers * self.kv_elements_per_token_per_layer() * kv_bytes

    def attended(self, context: float) -> list[tuple[int, float]]:
        """(layer count, tokens attended) groups for a query at this context length."""
        full = self.layers - self.sliding_layers
        groups = []
        if full:
            groups.append((full, float(context)))
        if self.sliding_layers:
            groups.append((self.sliding_layers, float(min(context, self.sliding_window))))
        return groups

    def kv_bytes_per_token_marginal(self, kv_bytes: float) -> float:
        """Bytes one more token adds once the context is past every sliding window: the
        full-attention layers only (equal to kv_bytes_per_token without sliding layers)."""
        return (self.layers - self.sliding_layers) * self.kv_elements_per_token_per_layer() * kv_bytes

    def kv_bytes_per_sequence(self, context: float, kv_bytes: float) -> float:
        per_layer = self.kv_elements_per_token_per_layer() * kv_bytes
        return sum(n * tokens * per_layer for n, tokens in self.attended(context))

    def attention_dims(self, phase: str) -> tuple[int, int]:
        """(score dim, value dim) per head used for attention FLOPs.

        MLA decode runs in the compressed space (weights absorbed): scores over d_c + d_R, values
        over d_c. MLA prefill decompresses K and V: scores over nope + rope, values over v_dim.
        """
        if self.is_mla:
            if phase == "decode":
                return self.mla_kv_rank + self.mla_rope_dim, self.mla_kv_rank
            return self.nope_dim + self.mla_rope_dim, self.v_dim
        return self.head_dim, self.head_dim

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ParamCounts:
    total: int
    active: int
    active_with_embedding: int
    embedding: int
    lm_head: int
    attention_per_layer: int
    dense_mlp_per_layer: int
    expert: int
    shared_per_layer: int
    router_per_layer: int
    dense_layers: int
    moe_layers: int
    non_expert: int  # every weight that is not a routed expert (read by every step)


MODEL_FIELDS = tuple(f.name for f in fields(ModelParams))


@dataclass(frozen=True)
class Preset:
    id: str
    name: str
    params: ModelParams
    sources: tuple[str, ...]
    published: dict[str, float] = field(default_factory=dict)
    derived: dict[str, float] = field(default_factory=dict)
    notes: str = ""
    aliases: tuple[str, ...] = ()

    def derive(self) -> dict[str, float]:
        """The numbers our code derives from the config (what the content file records)."""
        counts = self.params.counts()
        return {
            "total_params": counts.total,
            "active_params": counts.active,
            "active_params_with_embedding": counts.active_with_embedding,
            "kv_bytes_per_token_bf16": self.params.kv_bytes_per_token(2.0),
        }


def builtin_models_dir() -> Path:
    from studytui.core import paths

    candidate = paths.content_dir(None) / "models"
    if candidate.is_dir() and any(candidate.glob("*.yaml")):
        return candidate
    for base in (paths.PACKAGE_DIR / "_content", paths.CHECKOUT_DIR / "content"):
        if (base / "models").is_dir():
            return base / "models"
    return candidate


def params_from_config(config: dict[str, Any], name: str, where: str) -> ModelParams:
    unknown = set(config) - set(MODEL_FIELDS)
    if unknown:
        raise UsageError(f"{where}: unknown model field(s) {', '.join(sorted(unknown))}")
    try:
        return ModelParams(**{"name": name, **config})
    except TypeError as exc:
        raise UsageError(f"{where}: {exc}") from None


def _preset_from_file(path: Path) -> Preset:
    import yaml

    from studytui.core import fileio
    from studytui.core.yamlio import AliasError, error_line, safe_load

    text = fileio.read_text_bounded(path, fileio.YAML_LIMIT, "a model preset")
    try:
        data = safe_load(text)
    except AliasError as exc:
        raise UsageError(error_line(exc, str(path)) + "; not read") from None
    except yaml.YAMLError:
        raise UsageError(f"{path}: not valid YAML") from None
    if not isinstance(data, dict) or "id" not in data or "config" not in data:
        raise UsageError(f"{path}: a model preset needs 'id' and 'config'")
    params = params_from_config(dict(data["config"]), str(data["id"]), str(path))
    params.validate()
    return Preset(
        id=str(data["id"]),
        name=str(data.get("name") or data["id"]),
        params=params,
        sources=tuple(str(s) for s in data.get("sources") or []),
        published=dict(data.get("published") or {}),
        derived=dict(data.get("derived") or {}),
        notes=" ".join(str(data.get("notes") or "").split()),
        aliases=tuple(str(a).lower() for a in data.get("aliases") or []),
    )


_PRESETS: dict[str, dict[str, Preset]] = {}
_ONE: dict[str, Preset] = {}


def load_presets(models_dir: str | os.PathLike[str] | None = None) -> dict[str, Preset]:
    """All model presets by id (cached per directory)."""
    directory = Path(models_dir) if models_dir else builtin_models_dir()
    key = str(directory)
    if key not in _PRESETS:
        presets = {}
        for path in sorted(directory.glob("*.yaml")):
            preset = _ONE.get(str(path)) or _preset_from_file(path)
            presets[preset.id] = preset
        _PRESETS[key] = presets
    return _PRESETS[key]


def get_preset(name: str, field_name: str = "model") -> Preset:
    key = str(name).strip().lower()
    # Fast path: a preset file is named after its id, so one command reads one small file.
    path = builtin_models_dir() / f"{key}.yaml"
    if key and "/" not in key and "\\" not in key and path.is_file():
        if str(path) not in _ONE:
            _ONE[str(path)] = _preset_from_file(path)
        preset = _ONE[str(path)]
        if preset.id == key:
            return preset
    presets = load_presets()
    if key in presets:
        return presets[key]
    for preset in presets.values():
        if key in preset.aliases:
            return preset
    import difflib

    close = difflib.get_close_matches(key, list(presets), n=3, cutoff=0.5)
    hint = f"did you mean {', '.join(close)}? " if close else ""
    raise FieldError(field_name, f"unknown model {name!r}; {hint}presets: {', '.join(presets)}")


def with_overrides(params: ModelParams, **changes: Any) -> ModelParams:
    """A copy of `params` with the given (non-None) dims replaced."""
    return replace(params, **{k: v for k, v in changes.items() if v is not None})
