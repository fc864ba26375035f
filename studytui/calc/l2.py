"""L2 persistence: keep a reused tensor in the L2 cache with an access-policy window.

CUDA (compute capability 8.0 and later) lets a context set aside part of the L2 for persisting
accesses (cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, bytes), at most the device's
persistingL2CacheMaxSize) and mark a window of memory (cudaAccessPolicyWindow: base, num_bytes of
at most accessPolicyMaxWindowSize, hitRatio, hitProp = persisting). Lines of the window are
persisting with probability hitRatio; the CUDA Programming Guide advises a hit ratio of
set-aside / window size, so the persisting lines fit the set-aside instead of evicting each other.

Figures: the device attributes recorded on a real GPU (content/hardware/measured/device/
<id>-device.yaml for the H200, with its five fields, or a learner's own record written by
`studytui measure --clusters`); none are guessed: where no GPU reported them they are "not known".
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from studytui.calc.forms import CC_FIELDS, CalcSpec, DataDir, FieldSpec
from studytui.calc.occupancy import get_cc, measured_device_file
from studytui.calc.result import Result
from studytui.calc.units import FieldError, format_size
from studytui.core.records import FrozenRecord

ATTRIBUTES = ("l2CacheSize", "persistingL2CacheMaxSize", "accessPolicyMaxWindowSize")
PG_L2 = ("CUDA Programming Guide, 'L2 cache set-aside for persisting accesses' and 'L2 policy for persisting accesses' "
         "(https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#device-memory-l2-access-management)")


# A plain class, not a dataclass or a typed named tuple: on Python 3.11 their generated code costs up to
# a millisecond each time this module is imported (studytui.core.records, issue 27).
class L2Figures(FrozenRecord):
    """A GPU's L2 persistence figures and where each came from."""

    __slots__ = ("l2_bytes", "persisting_max_bytes", "window_max_bytes", "default_limit_bytes", "source", "record", "l2_source")

    l2_bytes: int | None
    persisting_max_bytes: int | None
    window_max_bytes: int | None
    default_limit_bytes: int | None
    source: str  # the record (device attributes), or why not known
    record: str | None  # the record file
    l2_source: str  # where the L2 size came from when no record holds it

    def __init__(
        self,
        l2_bytes: int | None,
        persisting_max_bytes: int | None,
        window_max_bytes: int | None,
        default_limit_bytes: int | None,
        source: str,
        record: str | None,
        l2_source: str = "",
    ) -> None:
        object.__setattr__(self, "l2_bytes", l2_bytes)
        object.__setattr__(self, "persisting_max_bytes", persisting_max_bytes)
        object.__setattr__(self, "window_max_bytes", window_max_bytes)
        object.__setattr__(self, "default_limit_bytes", default_limit_bytes)
        object.__setattr__(self, "source", source)
        object.__setattr__(self, "record", record)
        object.__setattr__(self, "l2_source", l2_source)


@lru_cache(maxsize=8)
def _read_attributes(path: str) -> tuple[dict[str, int], str, str, int | None]:
    from studytui.calc.parsed import tables_yaml

    raw = tables_yaml(path, "the device-attribute record", "gpu", "cannot read the device-attribute record")
    attrs = raw.get("attributes") or raw.get("device_attributes") or {}
    out: dict[str, int] = {}
    for name in ATTRIBUTES:
        item = attrs.get(name)
        value = item.get("value") if isinstance(item, dict) else item
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            out[name] = value
    hw = raw.get("hardware") or {}
    test = raw.get("persisting_l2_limit_test") or {}
    default = test.get("default_limit_bytes")
    return out, str(hw.get("name") or raw.get("accelerator") or ""), str(raw.get("date") or ""), int(default) if default else None


def l2_figures(accelerator: Any | None, data_dir: DataDir = None) -> L2Figures:
    """What is known of a catalog accelerator's L2 persistence (None: a compute capability alone)."""
    l2_catalog = None
    l2_source = ""
    if accelerator is not None:
        raw_l2 = accelerator.raw.get("l2_mb")
        if isinstance(raw_l2, (int, float)) and not isinstance(raw_l2, bool):
            l2_catalog = int(raw_l2 * 2**20)
            l2_source = str(accelerator.raw.get("l2_source") or "the catalog").split(":")[0]
        for kind in ("device", "clusters"):
            path = measured_device_file(accelerator.id, kind, data_dir)
            if path is None:
                continue
            try:
                attrs, name, date, default = _read_attributes(str(path))
            except (OSError, UnicodeDecodeError, KeyError, TypeError, ValueError, AttributeError) as exc:
                raise FieldError("gpu", f"cannot read the device-attribute record {path}: {type(exc).__name__} {exc}") from None
            if "persistingL2CacheMaxSize" not in attrs:
                continue
            return L2Figures(
                attrs.get("l2CacheSize", l2_catalog), attrs.get("persistingL2CacheMaxSize"), attrs.get("accessPolicyMaxWindowSize"),
                default, f"device attributes read on {name or accelerator.name} ({date[:10]}, {Path(path).name})", str(path),
                l2_source if "l2CacheSize" not in attrs else "",
            )
        why = f"not known: no GPU of this kind ({accelerator.id}) has reported its device attributes here"
        return L2Figures(l2_catalog, None, None, None, why + " (studytui measure --clusters records them)", None, l2_source)
    return L2Figures(None, None, None, None, "not known for a compute capability alone: the L2 and its persisting limit differ "
                     "between parts of one capability (H100 50 MiB, H200 60 MiB); give a GPU", None)


def l2_persistence(
    figures: L2Figures,
    nbytes: float,
    *,
    reuse: int = 2,
    set_aside: float | None = None,
    hit_ratio: float | None = None,
    label: str = "",
) -> Result:
    if reuse < 1:
        raise FieldError("reuse", "the tensor is read at least once")
    if hit_ratio is not None and not 0 < hit_ratio <= 1:
        raise FieldError("hit_ratio", f"a fraction above 0 and at most 1 (got {hit_ratio:g})")
    result = Result("l2")
    nbytes = int(nbytes)
    limit = figures.persisting_max_bytes
    window_max = figures.window_max_bytes

    if set_aside is None:
        aside = limit
        aside_how = "the largest the device allows (persistingL2CacheMaxSize)" if limit else ""
    else:
        aside = int(set_aside) if limit is None else min(int(set_aside), limit)
        aside_how = ("as asked; the device's limit is not known, so it may be less" if limit is None
                     else "as asked" if int(set_aside) <= limit else f"capped at persistingL2CacheMaxSize ({limit:,} B)")
    window = nbytes if window_max is None else min(nbytes, window_max)
    if hit_ratio is None and aside is not None:
        ratio: float | None = min(1.0, aside / window)
        ratio_how = f"set-aside / window = {aside:,} / {window:,}" + (" (capped at 1)" if aside >= window else "")
    else:
        ratio = hit_ratio
        ratio_how = "as asked" if hit_ratio is not None else ""
    persisting = None if ratio is None else int(ratio * window)
    kept = None if persisting is None or aside is None else min(persisting, aside)
    saved = None if kept is None else (reuse - 1) * kept

    result.values.update(
        target=label, tensor_bytes=nbytes, reuse=reuse, l2_bytes=figures.l2_bytes, persisting_l2_max_bytes=limit,
        access_policy_max_window_bytes=window_max, set_aside_bytes=aside, window_bytes=window, hit_ratio=ratio,
        persisting_bytes=persisting, dram_bytes_saved=saved, dram_bytes_without=reuse * nbytes,
        dram_bytes_with=None if saved is None else reuse * nbytes - saved, default_persisting_limit_bytes=figures.default_limit_bytes,
        figures_source=figures.source, record=figures.record, time_s=None,
    )

    def size(value: int | None) -> str:
        return "not known" if value is None else f"{value:,} B ({format_size(value, binary=True)})"

    result.row("target", label)
    result.row("L2", size(figures.l2_bytes) + (f" ({figures.l2_source})" if figures.l2_source and figures.l2_bytes else ""))
    result.row("persisting L2 max", size(limit) + (f" ({limit / figures.l2_bytes:.1%} of L2)" if limit and figures.l2_bytes else ""))
    result.row("access-policy window max", size(window_max))
    result.row("persisting set-aside", size(aside) + (f": {aside_how}" if aside is not None and aside_how else ""))
    result.row("window", f"{window:,} B of the {nbytes:,} B tensor" + ("" if window == nbytes else
                                                                      " (the rest of it is outside any one window)"))
    result.row("hit ratio", "not known (the set-aside is not known; give a set-aside request or a hit ratio)" if ratio is None
               else f"{ratio:.3g} ({ratio_how})")
    result.row("DRAM bytes saved", "not known" if saved is None else
               f"{saved:,} B ({format_size(saved, binary=True)}) over {reuse} read{'' if reuse == 1 else 's'}: {reuse - 1} x the "
               f"{kept:,} B kept persisting")
    result.row("source", figures.source)

    def known(value: int | None) -> str:
        return "not known" if value is None else f"{value:,}"

    result.step("set-aside = min(request, persistingL2CacheMaxSize) = "
                + (f"min({int(set_aside):,}, {known(limit)}) = {aside:,} B" if set_aside is not None
                   else f"{aside:,} B (no request: the most allowed)" if aside is not None else "not known"))
    result.step(f"window = min(tensor, accessPolicyMaxWindowSize) = min({nbytes:,}, {known(window_max)}) = {window:,} B")
    if ratio is not None:
        result.step(f"hit ratio = {ratio_how} = {ratio:.4g}")
    if saved is not None:
        result.step(f"persisting bytes = hit ratio x window = {persisting:,} B; kept = min(that, set-aside) = {kept:,} B")
        result.step(f"DRAM bytes saved = (reads - 1) x kept = {reuse - 1} x {kept:,} = {saved:,} B (the first read brings the lines in)")

    if ratio is not None and aside is not None and ratio * window > aside * 1.0001:
        result.warn(f"a hit ratio of {ratio:.3g} marks {int(ratio * window):,} B persisting but only {aside:,} B are set aside: "
                    "persisting lines evict each other (thrashing); the CUDA guide advises set-aside / window")
    if window_max is not None and nbytes > window_max:
        result.warn(f"the tensor is larger than one access-policy window ({window_max:,} B): only {window:,} B of it can be marked")
    if figures.l2_bytes and nbytes > figures.l2_bytes:
        result.warn("the tensor is larger than the whole L2: only part of it can stay, however the window is set")
    if figures.default_limit_bytes and aside and aside > figures.default_limit_bytes:
        result.assume(f"the set-aside must be asked for: cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, {aside:,}); the "
                      f"default here was {figures.default_limit_bytes:,} B (read on the device)")
    result.assume(f"the set-aside and window rules and the hit-ratio advice: {PG_L2}")
    result.assume("reads after the first hit in L2 for the bytes kept persisting, nothing else evicts them, and the rest of "
                  "the tensor comes from DRAM every time; persisting lines also shrink the L2 left for streaming data")
    return result


# ---- the calculator ------------------------------------------------------------------------

def _run(p: dict[str, Any], data_dir: DataDir) -> Result:
    from studytui.calc.hardware import load_catalog
    from studytui.calc.occupancy import cc_for_gpu

    gpu, cc_text = p.get("gpu"), p.get("cc")
    if gpu and cc_text:
        raise FieldError("cc", "give a GPU or a compute capability, not both")
    if cc_text:
        cc = get_cc(cc_text, data_dir)
        if float(cc.cc) < 8.0:
            raise FieldError("cc", f"L2 persistence (access-policy windows) needs compute capability 8.0 or later (this is {cc.cc})")
        figures, label = l2_figures(None, data_dir), f"compute capability {cc.cc} ({cc.architecture})"
    else:
        acc = load_catalog(data_dir).get(gpu or "h200")
        if acc.vendor != "NVIDIA":
            raise FieldError("gpu", f"{acc.name}: L2 persistence here is CUDA's access-policy window (cudaAccessPolicyWindow); "
                             "this accelerator has no such control")
        cc, label = cc_for_gpu(acc.id, data_dir)
        if float(cc.cc) < 8.0:
            raise FieldError("gpu", f"{acc.name}: L2 persistence needs compute capability 8.0 or later")
        figures = l2_figures(acc, data_dir)
    return l2_persistence(figures, p["bytes"], reuse=p["reuse"], set_aside=p.get("set_aside"), hit_ratio=p.get("hit_ratio"),
                          label=label)


SPEC = CalcSpec(
    "l2", "L2 persistence",
    "Keep a reused tensor in L2 with an access-policy window: the persisting set-aside (the request, at most "
    "persistingL2CacheMaxSize), the largest window (accessPolicyMaxWindowSize), the hit ratio to ask for, and the "
    "DRAM bytes the reuse saves. H200 figures are device attributes read on the GPU; others are not known until measured.",
    (
        *CC_FIELDS,
        FieldSpec("bytes", "tensor size", "size", required=True, help="bytes of the reused tensor (e.g. 24MiB)"),
        FieldSpec("reuse", "reads", "int", "2", help="times the tensor is read while it should stay (the first read fills L2)"),
        FieldSpec("set_aside", "set-aside request", "size", help="cudaLimitPersistingL2CacheSize asked for (default: the most allowed)"),
        FieldSpec("hit_ratio", "hit ratio", "float", maximum=1.0, help="hitRatio of the window (default: set-aside / window)"),
    ),
    _run,
    ui_defaults={"bytes": "24MiB", "reuse": "8"},
    headline=("persisting set-aside", "hit ratio", "DRAM bytes saved"),
    short_labels=((r"persisting set-aside", "set-aside"), (r"persisting L2 max", "persisting max"),
                  (r"access-policy window max", "window max"), (r"DRAM bytes saved", "DRAM saved")),
)
