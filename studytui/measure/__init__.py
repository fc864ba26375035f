"""`studytui measure`: micro-benchmarks of the local GPU, recorded under the guide's rule.

The logic here (sizes, timing loop, statistics, correctness gate, profile writing) knows nothing
about PyTorch: it drives a backend. `torch_backend` is the real one (imported only when a
measurement runs); the tests drive a fake one on the CPU.
"""

from __future__ import annotations

PROFILE_SCHEMA = "studytui-measured-profile/1"
