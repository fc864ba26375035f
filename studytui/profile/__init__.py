"""Your own kernels on the roofline (issue 30): Nsight Compute CSV exports and PyTorch profiler
traces, read as streams, each kernel set against the chosen GPU's ceilings.

    capture = load(path)                     # Capture: kernels with where each figure came from
    report = analyze(capture, gpu="h200")    # Report: roofline, limiter, physics floor, ranges
    to_json(report)                          # the `studytui profile --json` object

No Textual here, no Rich: the command line and the app both build on this package.
"""

from __future__ import annotations

import os
import zlib
from pathlib import Path

from studytui.core.filestate import PerFileState
from studytui.profile.analyze import Report, analyze
from studytui.profile.model import Capture, Kernel
from studytui.profile.report import to_json
from studytui.profile.source import ProfileError, open_profile

__all__ = ["Capture", "Kernel", "ProfileError", "Report", "analyze", "load", "load_cached", "to_json"]


def load(path: str | os.PathLike[str]) -> Capture:
    """Read an Nsight Compute CSV export (raw or details page) or a PyTorch profiler trace
    (.json, .json.gz). ProfileError (one line, exit 2) for anything else."""
    opened = open_profile(path)
    with opened:
        try:
            head = opened.head_text().lstrip()
            named_json = any(suffix.lower() == ".json" for suffix in Path(path).suffixes)
            if head.startswith(("{", "[")) or named_json:
                from studytui.profile.trace import read_trace

                return read_trace(opened.text(), opened.name, str(path))
            from studytui.profile.ncu import read_ncu

            return read_ncu(opened)
        except UnicodeDecodeError as exc:
            raise ProfileError(f"{opened.name}: bytes that are not {opened.encoding} text (at byte {exc.start:,} of a chunk); "
                               "binary data or a damaged file") from None
        except EOFError:
            raise ProfileError(f"{opened.name}: truncated (the gzip data ends early)") from None
        except zlib.error:
            raise ProfileError(f"{opened.name}: damaged gzip data") from None
        except ProfileError:
            raise
        except RecursionError:  # JSON nested thousands deep: json's decoder gives up, and so do we
            raise ProfileError(f"{opened.name}: JSON nested too deeply to be a profiler trace") from None
        except OSError as exc:  # gzip.BadGzipFile and read errors
            raise ProfileError(f"{opened.name}: cannot be read ({exc.strerror or exc})") from None


_CACHE: PerFileState[Capture] = PerFileState()


def load_cached(path: str | os.PathLike[str]) -> Capture:
    """`load`, kept while the file is unchanged (the app reopens a profile without reparsing it)."""
    return _CACHE.get(Path(path), load)
