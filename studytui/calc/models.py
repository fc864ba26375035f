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
from pathlib import Path
from typing import Any

from studytui.calc.units import FieldError
from studytui.core.errors import UsageError
from studytui.core.records import FrozenRecord


# The records here are plain classes (studytui.core.records), not frozen dataclasses: the
# transformer, kv and memory calculators import this module, and on Python 3.11 a dataclass's
# generated methods cost about a millisecond each time it does (issue 27).
class ModelParams(FrozenRecord):
    """A transformer's shape: the dimensions its parameter counts, KV cache and FLOPs follow from."""

    __slots__ = ("layers", "hidden", "intermediate", "heads", "kv_heads", "head_dim", "vocab", "name", "mlp_matrices",
                 "tied_embeddings", "experts", "active_experts", "shared_experts", "moe_intermediate", "dense_layers",
                 "mla_kv_rank", "mla_rope_dim", "mla_q_rank", "mla_nope_dim", "mla_v_dim", "sliding_window", "sliding_layers",
                 "attention_bias", "mlp_bias", "router_bias", "qk_norm", "attention_sinks", "max_position_embeddings")

    layers: int
    hidden: int
    intermediate: int  # dense MLP inner size (dense layers; 0 if every layer is MoE)
    heads: int
    kv_heads: int
    head_dim: int
    vocab: int
    name: str
    mlp_matrices: int  # 3 = gated (SwiGLU: gate, up, down), 2 = plain (up, down)
    tied_embeddings: bool
    # Mixture of experts (experts = 0: dense model)
    experts: int
    active_experts: int
    shared_experts: int
    moe_intermediate: int
    dense_layers: int  # leading dense layers in an MoE model (DeepSeek first_k_dense_replace)
    # Multi-head latent attention (mla_kv_rank = 0: ordinary MHA/GQA/MQA)
    mla_kv_rank: int
    mla_rope_dim: int
    mla_q_rank: int  # 0: queries projected directly from the hidden state
    mla_nope_dim: int  # 0: head_dim
    mla_v_dim: int  # 0: head_dim
    # Sliding-window attention: `sliding_layers` of the layers attend to the last `sliding_window` tokens
    sliding_window: int
    sliding_layers: int
    # Small extras that only change parameter counts
    attention_bias: bool  # biases on q, k, v and o projections
    mlp_bias: bool  # biases on MLP / expert projections
    router_bias: bool  # a per-expert bias in the router
    qk_norm: bool  # RMSNorm on q and k per head (Qwen3)
    attention_sinks: bool  # one learned logit per head (gpt-oss)
    # The longest context the published config declares (config.json max_position_embeddings);
    # 0: not known (custom dims)
    max_position_embeddings: int

    def __init__(
        self,
        layers: int,
        hidden: int,
        intermediate: int,
        heads: int,
        kv_heads: int,
        head_dim: int,
        vocab: int,
        name: str = "custom",
        mlp_matrices: int = 3,
        tied_embeddings: bool = False,
        experts: int = 0,
        active_experts: int = 0,
        shared_experts: int = 0,
        moe_intermediate: int = 0,
        dense_layers: int = 0,
        mla_kv_rank: int = 0,
        mla_rope_dim: int = 0,
        mla_q_rank: int = 0,
        mla_nope_dim: int = 0,
        mla_v_dim: int = 0,
        sliding_window: int = 0,
        sliding_layers: int = 0,
        attention_bias: bool = False,
        mlp_bias: bool = False,
        router_bias: bool = False,
        qk_norm: bool = False,
        attention_sinks: bool = False,
        max_position_embeddings: int = 0,
    ) -> None:
        object.__setattr__(self, "layers", layers)
        object.__setattr__(self, "hidden", hidden)
        object.__setattr__(self, "intermediate", intermediate)
        object.__setattr__(self, "heads", heads)
        object.__setattr__(self, "kv_heads", kv_heads)
        object.__setattr__(self, "head_dim", head_dim)
        object.__setattr__(self, "vocab", vocab)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "mlp_matrices", mlp_matrices)
        object.__setattr__(self, "tied_embeddings", tied_embeddings)
        object.__setattr__(self, "experts", experts)
        object.__setattr__(self, "active_experts", active_experts)
        object.__setattr__(self, "shared_experts", shared_experts)
        object.__setattr__(self, "moe_intermediate", moe_intermediate)
        object.__setattr__(self, "dense_layers", dense_layers)
        object.__setattr__(self, "mla_kv_rank", mla_kv_rank)
        object.__setattr__(self, "mla_rope_dim", mla_rope_dim)
        object.__setattr__(self, "mla_q_rank", mla_q_rank)
        object.__setattr__(self, "mla_nope_dim", mla_nope_dim)
        object.__setattr__(self, "mla_v_dim", mla_v_dim)
        object.__setattr__(self, "sliding_window", sliding_window)
        object.__setattr__(self, "sliding_layers", sliding_layers)
        object.__setattr__(self, "attention_bias", attention_bias)
        object.__setattr__(self, "mlp_bias", mlp_bias)
        object.__setattr__(self, "router_bias", router_bias)
        object.__setattr__(self, "qk_norm", qk_norm)
        object.__setattr__(self, "attention_sinks", attention_sinks)
        object.__setattr__(self, "max_position_embeddings", max_position_embeddings)

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
        return self._asdict()


class ParamCounts(FrozenRecord):
    """Parameters by where they sit (ModelParams.counts)."""

    __slots__ = ("total", "active", "active_with_embedding", "embedding", "lm_head", "attention_per_layer",
                 "dense_mlp_per_layer", "expert", "shared_per_layer", "router_per_layer", "dense_layers", "moe_layers",
                 "non_expert")

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

    def __init__(
        self,
        total: int,
        active: int,
        active_with_embedding: int,
        embedding: int,
        lm_head: int,
        attention_per_layer: int,
        dense_mlp_per_layer: int,
        expert: int,
        shared_per_layer: int,
        router_per_layer: int,
        dense_layers: int,
        moe_layers: int,
        non_expert: int,
    ) -> None:
        object.__setattr__(self, "total", total)
        object.__setattr__(self, "active", active)
        object.__setattr__(self, "active_with_embedding", active_with_embedding)
        object.__setattr__(self, "embedding", embedding)
        object.__setattr__(self, "lm_head", lm_head)
        object.__setattr__(self, "attention_per_layer", attention_per_layer)
        object.__setattr__(self, "dense_mlp_per_layer", dense_mlp_per_layer)
        object.__setattr__(self, "expert", expert)
        object.__setattr__(self, "shared_per_layer", shared_per_layer)
        object.__setattr__(self, "router_per_layer", router_per_layer)
        object.__setattr__(self, "dense_layers", dense_layers)
        object.__setattr__(self, "moe_layers", moe_layers)
        object.__setattr__(self, "non_expert", non_expert)


MODEL_FIELDS: tuple[str, ...] = ModelParams.__slots__
# The dimensions a config must give: those without a default (__init__ takes every slot, in order).
REQUIRED_FIELDS = MODEL_FIELDS[: len(MODEL_FIELDS) - len(ModelParams.__init__.__defaults__ or ())]


class Preset(FrozenRecord):
    """A published model's shape (content/models/<id>.yaml) with the figures its publisher gives."""

    __slots__ = ("id", "name", "params", "sources", "published", "derived", "notes", "aliases")

    id: str
    name: str
    params: ModelParams
    sources: tuple[str, ...]
    published: dict[str, float]
    derived: dict[str, float]
    notes: str
    aliases: tuple[str, ...]

    def __init__(
        self,
        id: str,
        name: str,
        params: ModelParams,
        sources: tuple[str, ...],
        published: dict[str, float] | None = None,
        derived: dict[str, float] | None = None,
        notes: str = "",
        aliases: tuple[str, ...] = (),
    ) -> None:
        object.__setattr__(self, "id", id)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "params", params)
        object.__setattr__(self, "sources", sources)
        object.__setattr__(self, "published", {} if published is None else published)
        object.__setattr__(self, "derived", {} if derived is None else derived)
        object.__setattr__(self, "notes", notes)
        object.__setattr__(self, "aliases", aliases)

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
    from studytui.calc.parsed import yaml_files

    if candidate.is_dir() and yaml_files(candidate):
        return candidate
    for base in (paths.PACKAGE_DIR / "_content", paths.CHECKOUT_DIR / "content"):
        if (base / "models").is_dir():
            return base / "models"
    return candidate


def params_from_config(config: dict[str, Any], name: str, where: str) -> ModelParams:
    unknown = set(config) - set(MODEL_FIELDS)
    if unknown:
        raise UsageError(f"{where}: unknown model field(s) {', '.join(sorted(unknown))}")
    missing = [name for name in REQUIRED_FIELDS if name not in config]
    if missing:
        raise UsageError(f"{where}: missing model field(s) {', '.join(missing)}")
    try:
        return ModelParams(**{"name": name, **config})
    except TypeError as exc:
        raise UsageError(f"{where}: {exc}") from None


def _parse_preset(path: Path) -> Any:
    import yaml

    from studytui.core import fileio
    from studytui.core.yamlio import AliasError, error_line, safe_load

    text = fileio.read_text_bounded(path, fileio.YAML_LIMIT, "a model preset")
    try:
        return safe_load(text)
    except AliasError as exc:
        raise UsageError(error_line(exc, str(path)) + "; not read") from None
    except yaml.YAMLError:
        raise UsageError(f"{path}: not valid YAML") from None


def _preset_from_file(path: Path) -> Preset:
    """A preset file, checked. Its YAML is kept parsed between runs while the file is unchanged
    (studytui.calc.parsed); the checks below run on every load all the same."""
    from studytui.calc.parsed import parsed_yaml

    data = parsed_yaml(path, "model preset", _parse_preset)
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
        from studytui.calc.parsed import yaml_files

        presets = {}
        for path in sorted(yaml_files(directory)):
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
    return params._replace(**{k: v for k, v in changes.items() if v is not None})
