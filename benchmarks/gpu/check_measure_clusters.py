"""Run `studytui measure --clusters`'s real path (ctypes over the CUDA driver) on this GPU and compare
its table with the recorded one (content/hardware/measured/device/h200-sxm-clusters.yaml), row by row.

    python3 benchmarks/gpu/check_measure_clusters.py OUT_DIR

Needs only the CUDA driver and Python (no PyTorch, no nvcc, no PyYAML): writes OUT_DIR/clusters.json
(the record measure --clusters would write) and prints the comparison; the comparison is redone on the
workstation with the YAML record.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from studytui.measure.clusters import record_clusters, summary  # noqa: E402
from studytui.measure.cuda_driver import make_cluster_backend  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out_dir", nargs="?", default=".", metavar="OUT_DIR", help="where clusters.json is written (default: .)")
    out = Path(parser.parse_args(argv).out_dir)
    out.mkdir(parents=True, exist_ok=True)
    start = time.time()
    backend = make_cluster_backend()
    record = record_clusters(backend, "h200-sxm", software={"python": sys.version.split()[0]}, progress=print)
    record["elapsed_s"] = round(time.time() - start, 1)
    (out / "clusters.json").write_text(json.dumps(record), encoding="utf-8")
    print("correctness:", json.dumps(record["correctness"]))
    print("attributes:", json.dumps(record["device_attributes"]))
    print("1 block per SM:", summary(record))
    print(f"{len(record['rows'])} rows in {record['elapsed_s']} s")
    return 0 if record["correctness"]["passed"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
