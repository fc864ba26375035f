"""Kernel names shortened for a table: `void at::native::vectorized_elementwise_kernel<8,
at::native::AUnaryFunctor<..., MulFunctor<float> >, ...>(int, ...)` becomes
`vectorized_elementwise_kernel<MulFunctor>`. The full name is always kept (JSON, detail views).
Control characters are escaped by the caller (studytui.core.text), not here."""

from __future__ import annotations

import re
from functools import lru_cache

_ANON = re.compile(r"\(anonymous namespace\)|<unnamed>")
_HINT = re.compile(r"\b([A-Za-z_]\w*?(?:Functor|Ops|Op|Func))\b")
_KERNELISH = re.compile(r"\b([A-Za-z_]\w*?_kernel(?:_cuda)?)\b")
# Wrappers whose first template argument is the real kernel (CUTLASS, CUTE).
_WRAPPERS = {"Kernel", "Kernel2", "device_kernel", "kernel"}
# Functor names that say only how an op is applied, not which op it is.
_GENERIC = {"AUnaryFunctor", "BUnaryFunctor", "BinaryFunctor", "UnaryFunctor", "ReduceOp", "func_wrapper_t", "OffsetCalculator",
            "gpu_kernel_impl", "gpu_kernel_impl_nocast", "distribution_nullary_kernel"}


_BRACKETS = re.compile(r"[<>(]")


def _top_level(name: str) -> tuple[str, str, bool]:
    """(the name without template arguments or parameters, the template text, had templates)."""
    depth = 0
    top: list[str] = []
    inside: list[str] = []
    had = False
    last = 0
    for m in _BRACKETS.finditer(name):
        ch, at = m.group(), m.start()
        if depth == 0:
            top.append(name[last:at])
            if ch == "(":
                return "".join(top).strip(), "".join(inside), had  # the parameter list
        else:
            inside.append(name[last:at])
        if ch == "<":
            depth += 1
            had = True
            if depth > 1:
                inside.append("<")
        elif ch == ">" and depth > 0:
            depth -= 1
            inside.append(">" if depth > 0 else " ")
        elif ch == ">":
            top.append(">")
        elif depth > 0:
            inside.append(ch)
        last = at + 1
    (top if depth == 0 else inside).append(name[last:])
    return "".join(top).strip(), "".join(inside), had


@lru_cache(maxsize=8192)
def short_name(name: str, width: int = 48) -> str:
    text = _ANON.sub("anon", name.strip())
    for prefix in ("void ", "__global__ "):
        if text.startswith(prefix):
            text = text[len(prefix):]
    base, templates, had = _top_level(text)
    base = base.split("::")[-1].strip() or text
    if had:
        first = templates.strip().split(",")[0].strip()
        if base in _WRAPPERS and re.fullmatch(r"[\w:]+", first):
            return _cut(first.split("::")[-1], width)
        hints = [h for h in _HINT.findall(templates) if h not in _GENERIC]
        kernels = [h for h in _KERNELISH.findall(templates) if h not in _GENERIC and h != base]
        hint = hints[-1] if hints else kernels[0] if kernels else "…"
        base = f"{base}<{hint}>"
    return _cut(base, width)


def _cut(base: str, width: int) -> str:
    if len(base) > width:
        keep = width - 1
        base = base[: (keep + 1) // 2] + "…" + base[len(base) - keep // 2:]
    return base
