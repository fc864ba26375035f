"""Shared test data for the study app: a small fixed guide, a fixed clock and environments.

The pilot and snapshot tests use this guide rather than the real content so they stay stable
while the content is edited; a few tests also start the app on the real guide.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

from studytui.guide.model import Entry, GlossaryTerm, Guide, Policy, Section, Subsection

if TYPE_CHECKING:
    from studytui.tui.app import StudyApp

TODAY = dt.date(2026, 11, 29)
# A desktop session: a browser may be opened.
DESKTOP_ENV = {"DISPLAY": ":0", "HOME": "/home/learner"}
SSH_ENV = {"SSH_CONNECTION": "10.0.0.2 52100 10.0.0.1 22", "DISPLAY": ":0"}
HEADLESS_LINUX_ENV = {"HOME": "/home/learner"}


def _entry(section: tuple[str, str], sub: tuple[str, str | None], index: int, id: str, title: str, **kw: Any) -> Entry:
    return Entry(
        id=id,
        title=title,
        url=kw.pop("url", f"https://example.org/{id}"),
        kind=kw.pop("kind", "paper"),
        summary=kw.pop("summary", f"What {title} teaches, in a sentence or two."),
        section_id=section[0],
        section_title=section[1],
        subsection_id=sub[0],
        subsection_title=sub[1],
        index=index,
        **kw,
    )


def build_guide() -> Guide:
    start = ("start-here", "Start here: the minimum mental model")
    kernels = ("kernel-optimization", "2. Kernel optimization")
    frontier = ("frontier", "Frontier")
    s0 = ("start-here-main", None)
    k1 = ("matmul", "Matrix multiplication")
    k2 = ("attention", "Attention")
    f0 = ("frontier-main", None)
    e = [
        _entry(start, s0, 0, "roofline", "Roofline: An Insightful Visual Performance Model",
               authors=("Samuel Williams", "Andrew Waterman", "David Patterson"), year=2009,
               tags=("roofline", "arithmetic intensity"),
               summary="Plots attainable **FLOP/s** against arithmetic intensity. Learn to place a kernel under the roof."),
        _entry(start, s0, 1, "cuda-basics", "CUDA C++ basics", kind="docs", tags=("cuda", "threads")),
        _entry(start, s0, 2, "inference-arithmetic", "Transformer Inference Arithmetic", kind="blog",
               tags=("kv cache", "latency")),
        _entry(kernels, k1, 3, "volkov-gemm", "Benchmarking GPUs to Tune Dense Linear Algebra",
               authors=("Vasily Volkov", "James W. Demmel"), year=2008, tags=("gemm", "tiling", "registers")),
        _entry(kernels, k1, 4, "stream-k", "Stream-K: Work-centric Parallel Decomposition", tags=("gemm", "load balance")),
        _entry(kernels, k2, 5, "flashattention", "FlashAttention", authors=("Tri Dao",), year=2022,
               tags=("attention", "tiling", "online softmax")),
        _entry(kernels, k2, 6, "flashattention-2", "FlashAttention-2", authors=("Tri Dao",), year=2023, tags=("attention",)),
        _entry(frontier, f0, 7, "rubin-cpx", "Rubin CPX", kind=None, url=None, role="watchlist", date="2026-08-23",
               no_url_reason="announced, no technical document yet"),
        _entry(frontier, f0, 8, "new-kernel-lib", "A new kernel library", kind="repo", date="2026-08-23"),
    ]
    sections = (
        Section(start[0], start[1], "Read these in order: they give the **minimum** model of where time goes.",
                (Subsection(s0[0], None, tuple(e[0:3])),), ordered=True),
        Section(kernels[0], kernels[1], "How fast kernels are built, from GEMM to attention.",
                (Subsection(k1[0], k1[1], tuple(e[3:5])), Subsection(k2[0], k2[1], tuple(e[5:7])))),
        Section(frontier[0], frontier[1], "New and changing work, dated.",
                (Subsection(f0[0], None, tuple(e[7:9])),), verified_on="2026-08-23"),
    )
    glossary = (
        GlossaryTerm("arithmetic-intensity", "Arithmetic intensity", "FLOPs per byte moved.", see=("roofline",),
                     aliases=("AI",)),
        GlossaryTerm("kv-cache", "KV cache", "Keys and values kept between decoding steps.", see=("inference-arithmetic",)),
    )
    policy = Policy("Only **primary sources**. Every number states its conditions.",
                    ("paper", "spec", "docs", "repo", "report"),
                    ("hardware", "workload", "precision", "baseline", "correctness"))
    return Guide("AI Performance Engineering", "wafer-ai/gpu-perf-engineering-resources", "MIT", sections, glossary,
                 policy, "tests")




def screen_text(app: "StudyApp") -> str:
    """Everything on screen as plain text, one line per row."""
    from studytui.tui.compat import screen_lines

    return "\n".join(strip.text for strip in screen_lines(app))


async def wait_until(pilot: Any, condition: Any, timeout: float = 10.0, step: float = 0.05) -> bool:
    """Let the app run until `condition()` holds (or `timeout` seconds pass); returns whether it
    held. Instead of fixed sleeps: fast on an idle machine, still right on a loaded one."""
    import time

    deadline = time.monotonic() + timeout
    while True:
        await pilot.pause()
        if condition():
            return True
        if time.monotonic() > deadline:
            return False
        await pilot.pause(step)


async def wait_for_palette(pilot: Any, app: Any, text: str, timeout: float = 10.0) -> bool:
    """After typing into the command palette: wait until its highlighted hit mentions `text`
    (the palette searches in the background), so Enter picks it."""
    from textual.command import CommandList

    def ready() -> bool:
        found = app.screen.query(CommandList)
        if not found:
            return False
        hits = found.first()
        index = hits.highlighted
        if index is None:
            return False
        return text.lower() in str(hits.get_option_at_index(index).prompt).lower()

    return await wait_until(pilot, ready, timeout=timeout)
