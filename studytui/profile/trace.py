"""PyTorch profiler traces (Chrome trace JSON, `.json` or `.json.gz`), streamed event by event.

`prof.export_chrome_trace(path)` writes an object: "schemaVersion", "deviceProperties",
"record_shapes", ..., "traceEvents": [...]. Checked on traces from torch 2.11 (CUDA 13, H200):

- GPU kernels are complete events ("ph": "X") of category "kernel" on the GPU's pid (the device
  index) and the stream's tid; "ts" and "dur" are microseconds (the Trace Event Format's unit,
  whatever "displayTimeUnit" says); "args" holds "External id", "correlation", "grid", "block";
- the aten ops are category "cpu_op" on the CPU thread, with the same "External id" as the kernels
  they launched and, with record_shapes=True, "Input Dims", "Input type" and "Concrete Inputs";
  an op called inside another (aten::mm inside aten::matmul inside aten::linear) lies inside it in
  time on the same thread;
- `record_function` ranges are category "user_annotation" on the CPU thread (and
  "gpu_user_annotation" on the stream, spanning the kernels they launched).

A kernel's range is the chain of user annotations around the op that launched it (or, for a
kernel with no op, the GPU annotations around it). Its FLOPs come from the outermost op around it
with a known formula (`studytui.profile.flops`), counted once per op, on the op's longest kernel.

Memory stays bounded: one event is decoded at a time (json's raw_decode on a sliding buffer) and
only a few fields of kernels, ops and annotations are kept.
"""

from __future__ import annotations

import json
import math
from typing import Any, Iterator, TextIO

from studytui.core.records import Record
from studytui.profile import flops as flops_model
from studytui.profile.model import Capture, Kernel
from studytui.profile.source import ProfileError

CHUNK_CHARS = 1 << 20
MAX_EVENT_CHARS = 8 << 20  # one trace event; the largest op records (a cat of many tensors) are far smaller
MAX_VALUE_CHARS = 16 << 20  # any other top-level value (deviceProperties, distributedInfo)
MAX_RECORDS = 5_000_000  # kernels + ops + annotations kept
KERNEL_CATEGORIES = {"kernel"}
OP_CATEGORIES = {"cpu_op", "operator"}
ANNOTATION_CATEGORIES = {"user_annotation"}
GPU_ANNOTATION_CATEGORIES = {"gpu_user_annotation"}
RUNTIME_CATEGORIES = {"cuda_runtime", "cuda_driver", "runtime"}
OTHER_GPU_CATEGORIES = {"gpu_memcpy", "gpu_memset"}
WS = " \t\r\n"
# Times no profiler writes: "ts" and "dur" are microseconds, and an event of the categories read
# here lasts less than a day; a timestamp is at most microseconds since 1970 and then some.
MAX_DURATION_US = 86_400e6
MAX_TIMESTAMP_US = 1e17


class _Stream:
    """JSON values read one at a time from a text stream, through a buffer of a few MiB."""

    def __init__(self, text: TextIO, name: str):
        self.text = text
        self.name = name
        self.buf = ""
        self.pos = 0
        self.eof = False
        self.consumed = 0  # characters dropped from the front of the buffer
        self.decoder = json.JSONDecoder()

    def _more(self) -> bool:
        if self.eof:
            return False
        chunk = self.text.read(CHUNK_CHARS)
        if not chunk:
            self.eof = True
            return False
        self.consumed += self.pos
        self.buf = self.buf[self.pos:] + chunk
        self.pos = 0
        return True

    def where(self) -> int:
        return self.consumed + self.pos

    def peek(self) -> str:
        """The next character that is not white space ('' at the end)."""
        while True:
            while self.pos < len(self.buf) and self.buf[self.pos] in WS:
                self.pos += 1
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self._more():
                return ""

    def take(self, expected: str, what: str) -> None:
        c = self.peek()
        if c != expected:
            self.fail(f"expected {expected!r} {what}", c)
        self.pos += 1

    def fail(self, message: str, found: str) -> None:
        if found == "":
            raise ProfileError(f"{self.name}: truncated (the JSON ends {message.replace('expected', 'before')})")
        raise ProfileError(f"{self.name}: not a profiler trace: {message} at character {self.where():,}")

    def value(self, limit: int, what: str) -> Any:
        self.peek()
        while True:
            try:
                obj, end = self.decoder.raw_decode(self.buf, self.pos)
            except ValueError as exc:
                if not isinstance(exc, json.JSONDecodeError):  # an integer of more than 4,300 digits
                    raise ProfileError(f"{self.name}: a number too long to read (over 4,300 digits) after character "
                                       f"{self.where():,}; not a profiler trace") from None
                if len(self.buf) - self.pos > limit:
                    raise ProfileError(f"{self.name}: {what} larger than {limit >> 20} MiB at character {self.where():,}; not a "
                                       "profiler trace") from None
                if self._more():
                    continue
                if exc.pos >= len(self.buf.rstrip()) - 1 or exc.msg.startswith("Unterminated"):
                    raise ProfileError(f"{self.name}: truncated (the JSON ends inside {what})") from None
                raise ProfileError(f"{self.name}: not valid JSON at character {self.consumed + exc.pos:,} ({exc.msg})") from None
            # A number at the very end of the buffer may continue in the next chunk.
            if end >= len(self.buf) and not self.eof and isinstance(obj, (int, float)):
                if self._more():
                    continue
            self.pos = end
            return obj


def iter_events(text: TextIO, name: str, meta: dict[str, Any]) -> Iterator[Any]:
    """The trace's events one at a time; the other top-level values go into `meta`."""
    s = _Stream(text, name)
    first = s.peek()
    if first == "[":  # the Trace Event Format's array form
        meta["_array"] = True
        yield from _array(s, allow_unclosed=True)
        return
    if first != "{":
        raise ProfileError(f"{name}: not a profiler trace (JSON that is not an object with traceEvents)")
    s.take("{", "")
    found = False
    if s.peek() == "}":
        s.pos += 1
    else:
        while True:
            key = s.value(1 << 16, "a key")
            if not isinstance(key, str):
                raise ProfileError(f"{name}: not valid JSON (an object key that is not a string)")
            s.take(":", "after a key")
            if key == "traceEvents":
                if s.peek() != "[":
                    raise ProfileError(f"{name}: not a profiler trace (traceEvents is not a list)")
                found = True
                yield from _array(s, allow_unclosed=False)
            else:
                meta[key] = s.value(MAX_VALUE_CHARS, f"the value of {key!r}")
            c = s.peek()
            if c == ",":
                s.pos += 1
                continue
            if c == "}":
                s.pos += 1
                break
            s.fail("expected ',' or '}' in the top-level object", c)
    if s.peek() != "":
        s.fail("expected the end of the file after the top-level object", s.peek())
    if not found:
        raise ProfileError(f"{name}: JSON but not a profiler trace (no \"traceEvents\"); export one with prof.export_chrome_trace(PATH)")


def _array(s: _Stream, allow_unclosed: bool) -> Iterator[Any]:
    s.take("[", "")
    if s.peek() == "]":
        s.pos += 1
        return
    while True:
        if allow_unclosed and s.peek() == "":
            return  # the array form may stop without its closing bracket (written incrementally)
        yield s.value(MAX_EVENT_CHARS, "an event")
        c = s.peek()
        if c == ",":
            s.pos += 1
            if allow_unclosed and s.peek() in ("", "]"):
                if s.peek() == "]":
                    s.pos += 1
                return
            continue
        if c == "]":
            s.pos += 1
            return
        if c == "" and allow_unclosed:
            return
        s.fail("expected ',' or ']' between events", c)


# -- what is kept of each event -----------------------------------------------------------------
# The records here are plain classes, not dataclasses: on Python 3.11 a dataclass's generated
# methods cost about a millisecond each time this module is imported (issue 27).
class _Op(Record):
    __slots__ = ("name", "ts", "end", "thread", "ext", "args", "parent", "annotations")

    name: str
    ts: float
    end: float
    thread: tuple[Any, Any]
    ext: Any
    args: dict[str, Any] | None  # only for ops with a FLOP formula
    parent: int | None
    annotations: tuple[str, ...]

    def __init__(
        self,
        name: str,
        ts: float,
        end: float,
        thread: tuple[Any, Any],
        ext: Any,
        args: dict[str, Any] | None,
        parent: int | None = None,
        annotations: tuple[str, ...] = (),
    ) -> None:
        self.name = name
        self.ts = ts
        self.end = end
        self.thread = thread
        self.ext = ext
        self.args = args
        self.parent = parent
        self.annotations = annotations


class _Interval(Record):
    __slots__ = ("name", "ts", "end")

    name: str
    ts: float
    end: float

    def __init__(
        self,
        name: str,
        ts: float,
        end: float,
    ) -> None:
        self.name = name
        self.ts = ts
        self.end = end


class _Collected(Record):
    __slots__ = ("kernels", "ops", "annotations", "gpu_annotations", "runtime_ext", "other_time_us", "other_events", "negative",
                 "events", "complete_events")

    kernels: list[tuple[Kernel, float, float, Any, Any, tuple[Any, Any]]]
    ops: list[_Op]
    annotations: dict[tuple[Any, Any], list[_Interval]]
    gpu_annotations: dict[tuple[Any, Any], list[_Interval]]
    runtime_ext: dict[Any, Any]  # correlation -> External id
    other_time_us: float
    other_events: int
    negative: int  # events with a negative duration, left out
    events: int
    complete_events: int

    def __init__(
        self,
        kernels: list[tuple[Kernel, float, float, Any, Any, tuple[Any, Any]]] | None = None,
        ops: list[_Op] | None = None,
        annotations: dict[tuple[Any, Any], list[_Interval]] | None = None,
        gpu_annotations: dict[tuple[Any, Any], list[_Interval]] | None = None,
        runtime_ext: dict[Any, Any] | None = None,
        other_time_us: float = 0.0,
        other_events: int = 0,
        negative: int = 0,
        events: int = 0,
        complete_events: int = 0,
    ) -> None:
        self.kernels = [] if kernels is None else kernels
        self.ops = [] if ops is None else ops
        self.annotations = {} if annotations is None else annotations
        self.gpu_annotations = {} if gpu_annotations is None else gpu_annotations
        self.runtime_ext = {} if runtime_ext is None else runtime_ext
        self.other_time_us = other_time_us
        self.other_events = other_events
        self.negative = negative
        self.events = events
        self.complete_events = complete_events


def _number(value: Any) -> float | None:
    """A JSON number as a float (an integer too large for one: infinity, refused by the caller);
    None for anything that is not a number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        return float(value)
    except OverflowError:
        return math.inf


def _implausible(ts: float, dur: float) -> str:
    """Why an event's times are not times a profiler writes, or ""."""
    if math.isnan(dur):
        return "dur is not a number (NaN)"
    if not math.isfinite(dur):
        return "dur is a number too large for any duration"
    if dur > MAX_DURATION_US:
        return f"dur {dur:.4g} us is longer than a day"
    if not math.isfinite(ts) or abs(ts) > MAX_TIMESTAMP_US:
        if math.isnan(ts):
            return "ts is not a number (NaN)"
        return "ts is a number too large for a time" if not math.isfinite(ts) else f"ts {ts:.4g} us is not a time a profiler writes"
    return ""


READ_CATEGORIES = (KERNEL_CATEGORIES | OP_CATEGORIES | ANNOTATION_CATEGORIES | GPU_ANNOTATION_CATEGORIES | RUNTIME_CATEGORIES
                   | OTHER_GPU_CATEGORIES)


def _key(value: Any) -> Any:
    return value if isinstance(value, (str, int, float)) and not isinstance(value, bool) else None


def _collect(events: Iterator[Any], name: str) -> _Collected:
    c = _Collected()
    names: dict[str, str] = {}
    kept = 0
    for event in events:
        c.events += 1
        if not isinstance(event, dict):
            raise ProfileError(f"{name}: not a profiler trace (event {c.events:,} is not an object)")
        if event.get("ph") != "X":
            continue
        c.complete_events += 1
        cat = str(event.get("cat", "")).lower()
        ts, dur = _number(event.get("ts")), _number(event.get("dur"))
        if ts is None or dur is None or cat not in READ_CATEGORIES:
            continue
        why = _implausible(ts, dur)
        if why:
            from studytui.core.text import one_line

            label = one_line(str(event.get("name", "")))[:60]
            raise ProfileError(f"{name}: event {c.events:,} ({cat} '{label}'): {why}; not a profiler trace's times")
        if dur < 0:
            c.negative += 1  # left out, and said so
            continue
        args = event.get("args")
        args = args if isinstance(args, dict) else {}
        label = str(event.get("name", ""))
        label = names.setdefault(label, label)  # one copy of each repeated name
        thread = (_key(event.get("pid")), _key(event.get("tid")))
        if cat in KERNEL_CATEGORIES:
            k = Kernel(index=len(c.kernels), name=label, duration_s=dur * 1e-6, duration_source="trace: kernel event's dur")
            k.launch_id = str(args.get("correlation", ""))
            k.device_index = str(args.get("device", thread[0] if thread[0] is not None else ""))
            k.stream = str(args.get("stream", thread[1] if thread[1] is not None else ""))
            grid, block = args.get("grid"), args.get("block")
            k.grid = str(tuple(grid)) if isinstance(grid, list) else ""
            k.block = str(tuple(block)) if isinstance(block, list) else ""
            c.kernels.append((k, ts, ts + dur, _key(args.get("External id")), _key(args.get("correlation")), thread))
        elif cat in OP_CATEGORIES:
            keep = args if label in flops_model.KNOWN_OPS else None
            c.ops.append(_Op(label, ts, ts + dur, thread, _key(args.get("External id")), keep))
        elif cat in ANNOTATION_CATEGORIES:
            c.annotations.setdefault(thread, []).append(_Interval(label, ts, ts + dur))
        elif cat in GPU_ANNOTATION_CATEGORIES:
            c.gpu_annotations.setdefault(thread, []).append(_Interval(label, ts, ts + dur))
        elif cat in RUNTIME_CATEGORIES:
            corr, ext = _key(args.get("correlation")), _key(args.get("External id"))
            if corr is not None and ext is not None:
                c.runtime_ext[corr] = ext
            else:
                continue
        elif cat in OTHER_GPU_CATEGORIES:
            c.other_time_us += dur
            c.other_events += 1
            continue
        else:
            continue
        kept += 1
        if kept > MAX_RECORDS:
            raise ProfileError(f"{name}: more than {MAX_RECORDS:,} kernels, ops and annotations; profile fewer steps")
    return c


def _enclosing(intervals: list[_Interval], points: list[tuple[float, int]]) -> dict[int, tuple[str, ...]]:
    """For each (time, id) point, the names of the intervals around it, outermost first.
    Intervals that nest (as record_function ranges on one thread do) are walked with a stack."""
    out: dict[int, tuple[str, ...]] = {}
    order = sorted(intervals, key=lambda iv: (iv.ts, -iv.end))
    stack: list[_Interval] = []
    i = 0
    for t, ident in sorted(points):
        while i < len(order) and order[i].ts <= t:
            while stack and stack[-1].end < order[i].ts:
                stack.pop()
            stack.append(order[i])
            i += 1
        while stack and stack[-1].end < t:
            stack.pop()
        out[ident] = tuple(iv.name for iv in stack if iv.ts <= t <= iv.end)
    return out


def _link_ops(ops: list[_Op]) -> None:
    """Each op's parent: the innermost op around it on the same thread."""
    by_thread: dict[tuple[Any, Any], list[int]] = {}
    for i, op in enumerate(ops):
        by_thread.setdefault(op.thread, []).append(i)
    for indices in by_thread.values():
        indices.sort(key=lambda i: (ops[i].ts, -ops[i].end))
        stack: list[int] = []
        for i in indices:
            op = ops[i]
            while stack and ops[stack[-1]].end < op.ts:
                stack.pop()
            if stack and op.end <= ops[stack[-1]].end + 1e-3:
                op.parent = stack[-1]
            stack.append(i)


def read_trace(opened_text: TextIO, name: str, path: str) -> Capture:
    meta: dict[str, Any] = {}
    collected = _collect(iter_events(opened_text, name, meta), name)
    if not collected.kernels:
        if collected.events == 0:
            raise ProfileError(f"{name}: a profiler trace with no events")
        raise ProfileError(
            f"{name}: a trace with no GPU kernels (category \"kernel\"): record it with "
            "activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]"
        )
    capture = Capture(path=path, format="torch-trace", format_label="PyTorch profiler trace (Chrome trace JSON)", kernels=[])
    props = meta.get("deviceProperties")
    if isinstance(props, list):
        capture.devices = [str(p.get("name")) for p in props if isinstance(p, dict) and p.get("name")]
    shapes_flag = meta.get("record_shapes")
    ops = collected.ops
    has_shapes = any(op.args and isinstance(op.args.get("Input Dims"), list) for op in ops)
    capture.record_shapes = bool(shapes_flag) if isinstance(shapes_flag, (int, bool)) else has_shapes
    if meta.get("_array"):
        capture.notes.append("a trace in the array form (no device properties or metadata)")
    _link_ops(ops)
    by_ext: dict[Any, int] = {}
    for i, op in enumerate(ops):
        if op.ext is not None:
            by_ext.setdefault(op.ext, i)
    # Annotations around each op (CPU side).
    points: dict[tuple[Any, Any], list[tuple[float, int]]] = {}
    for i, op in enumerate(ops):
        points.setdefault(op.thread, []).append((op.ts, i))
    for thread, pts in points.items():
        found = _enclosing(collected.annotations.get(thread, []), pts)
        for i, chain in found.items():
            ops[i].annotations = chain
    # GPU-side annotations, for kernels launched by no op.
    gpu_points: dict[tuple[Any, Any], list[tuple[float, int]]] = {}
    for j, (_k, ts, _end, _ext, _corr, thread) in enumerate(collected.kernels):
        gpu_points.setdefault(thread, []).append((ts, j))
    gpu_chain: dict[int, tuple[str, ...]] = {}
    for thread, pts in gpu_points.items():
        gpu_chain.update(_enclosing(collected.gpu_annotations.get(thread, []), pts))

    owners: dict[int, list[int]] = {}  # op index -> kernels it owns
    reasons: dict[int, str] = {}
    for j, (kernel, _ts, _end, ext, corr, _thread) in enumerate(collected.kernels):
        if ext is None and corr is not None:
            ext = collected.runtime_ext.get(corr)
        op_index = by_ext.get(ext) if ext is not None else None
        if op_index is None:
            kernel.range = gpu_chain.get(j, ())
            reasons[j] = "no aten op recorded for this kernel (no External id)"
            continue  # gemm_flops stays unknown: nothing says what the kernel computed
        op = ops[op_index]
        kernel.op = op.name
        kernel.range = op.annotations
        owner = None
        walk: int | None = op_index
        while walk is not None:
            if ops[walk].name in flops_model.KNOWN_OPS:
                owner = walk
            walk = ops[walk].parent
        if owner is None:
            reasons[j] = f"{op.name}: no FLOP formula for this op (FLOPs from shapes cover matmul, linear, bmm and attention)"
            kernel.gemm_flops = 0.0  # not a matrix multiply (its elementwise FLOPs are not counted)
            continue
        owners.setdefault(owner, []).append(j)
        if op.args is not None:
            kernel.op_shapes = op.args.get("Input Dims") or []
            kernel.op_types = [str(t) for t in op.args.get("Input type") or []]
    for owner, kernel_ids in owners.items():
        op = ops[owner]
        work, why = flops_model.op_work(op.name, op.args or {})
        main = max(kernel_ids, key=lambda j: (collected.kernels[j][0].duration_s or 0.0, -j))
        for j in kernel_ids:
            kernel = collected.kernels[j][0]
            if kernel.op and kernel.op != op.name:
                kernel.op = f"{kernel.op} (in {op.name})"
            if work is None:
                reasons[j] = f"{op.name}: {why}"
                continue
            if j != main:
                kernel.flops_owner = main
                kernel.gemm_flops = 0.0  # counted once, on the op's main kernel
                reasons[j] = f"{op.name}'s FLOPs are counted on its longest kernel (#{main})"
                continue
            cls = work.precision_class or "unknown"
            if cls == "fp32" and "tf32" in kernel.name.lower():
                cls = "tensor_tf32"
                kernel.notes.append("an fp32 matmul run on the tensor cores as TF32 (the kernel's name says tf32)")
            kernel.flops_by_class[cls] = work.flops
            kernel.gemm_flops = work.flops
            if work.kind == "attention":
                kernel.attention_flops = work.flops
            kernel.model_bytes = work.model_bytes
            kernel.flops_source = f"from the recorded shapes of {op.name}: {work.formula} (a model: a lower bound on the work)"
            kernel.op_shapes = (op.args or {}).get("Input Dims") or []
            kernel.op_types = [str(t) for t in (op.args or {}).get("Input type") or []]
            if work.note:
                kernel.notes.append(work.note)
    for j, (kernel, *_rest) in enumerate(collected.kernels):
        kernel.bytes_source = "unknown: a trace has no DRAM counters (profile the kernel with Nsight Compute)"
        if not kernel.flops_by_class:
            kernel.flops_source = "unknown: " + reasons.get(j, "no FLOP formula for this kernel")
            if not capture.record_shapes and kernel.op and any(kernel.op.startswith(o) for o in flops_model.KNOWN_OPS):
                kernel.flops_source = "unknown: the trace was recorded without shapes (record_shapes=True)"
        capture.kernels.append(kernel)
    capture.kernels.sort(key=lambda k: collected.kernels[k.index][1])
    remap = {k.index: i for i, k in enumerate(capture.kernels)}
    for i, k in enumerate(capture.kernels):
        k.index = i
    for k in capture.kernels:
        if k.flops_owner is not None:
            k.flops_owner = remap[k.flops_owner]
            k.flops_source = f"counted on kernel #{k.flops_owner} ({k.op}): one op's FLOPs are counted once"
    if collected.negative:
        events = f"{collected.negative:,} event{'s' if collected.negative != 1 else ''}"
        capture.warnings.append(f"{events} with a negative duration (dur < 0) left out: a broken "
                                "clock or a damaged trace; kernels and ranges may be missing")
    capture.other_gpu_time_s = collected.other_time_us * 1e-6
    capture.other_gpu_events = collected.other_events
    capture.metric_set = "durations, with FLOPs from shapes" if capture.record_shapes else "durations only (recorded without shapes)"
    if not capture.record_shapes:
        capture.notes.append("recorded without record_shapes=True: GEMM FLOPs are unknown; kernels and ranges only")
    return capture
