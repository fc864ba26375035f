"""Turn what benchmarks/gpu/capture_h200_records.sh brought back into the shipped record files.

    tar xzf records.tar.gz -C /tmp/rec
    .venv/bin/python benchmarks/gpu/write_h200_records.py --records /tmp/rec

Writes (no GPU needed):
- content/hardware/measured/device/h200-sxm-device.yaml    device attributes (L2 persistence, on-chip memory)
- content/hardware/measured/device/h200-sxm-clusters.yaml  cudaOccupancyMaxActiveClusters table + residency check
- content/profiles/h200/                                    the ncu CSV exports, the PyTorch trace, records.yaml, README.md
The device files sit in a sub-folder on purpose: `studytui check` reads every YAML file directly in
content/hardware/measured/ as a `studytui measure` profile, which these are not.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def fmt(v) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(fmt(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {fmt(x)}" for k, x in v.items()) + "}"
    return json.dumps(str(v))


def load(path: Path):
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def smi_row(path: Path) -> dict:
    with open(path, encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    return {k.strip(): v.strip() for k, v in zip(rows[0], rows[1])}


def hardware_block(rec: Path, dev: dict) -> list[str]:
    smi = smi_row(rec / "smi-before.csv")
    after = smi_row(rec / "smi-after.csv")
    cc = f"{dev['attributes']['computeCapabilityMajor']['value']}.{dev['attributes']['computeCapabilityMinor']['value']}"
    return [
        "hardware:",
        f"  name: {fmt(dev['name'])}",
        "  catalog_id: h200-sxm",
        f"  sm_count: {dev['attributes']['multiProcessorCount']['value']}",
        f"  memory_bytes: {dev['totalGlobalMem']}",
        f"  compute_capability: {fmt(cc)}",
        f"  driver: {fmt(smi['driver_version'])}",
        "  clocks:",
        f"    sm_max_mhz: {int(smi['clocks.max.sm [MHz]'].split()[0])}",
        f"    memory_max_mhz: {int(smi['clocks.max.memory [MHz]'].split()[0])}",
        f"    sm_idle_before_mhz: {int(smi['clocks.current.sm [MHz]'].split()[0])}",
        f"    sm_idle_after_mhz: {int(after['clocks.current.sm [MHz]'].split()[0])}",
        "    sm_during_kernels: 'ncu read 1.53-2.04 GHz (sm__cycles_elapsed.avg.per_second) during the profiled kernels'",
        "    control: left as found (never changed; ncu ran with --clock-control none)",
        f"  power_limit_w: {float(smi['power.limit [W]'].split()[0])}",
        f"  persistence_mode: {fmt(smi['persistence_mode'])}",
        f"  mig: {fmt(smi['mig.mode.current'])}",
        "  machine: a fresh one-GPU nvidia-h200 lease (Firecracker microVM)",
    ]


def software_block(rec: Path, dev: dict | None) -> list[str]:
    v = load(rec / "versions.json")
    tools = (rec / "tools.txt").read_text(encoding="utf-8")
    nvcc = next((ln.split("release ")[1] for ln in tools.splitlines() if "release" in ln), "")
    ncu = next((ln.split("Version ")[1].split(" ")[0] for ln in tools.splitlines() if ln.startswith("Version ")), "")
    smi = smi_row(rec / "smi-before.csv")
    out = [
        "software:",
        f"  driver: {fmt(smi['driver_version'])}",
        f"  cuda_toolkit: {fmt(nvcc)}",
    ]
    if dev:
        out.append(f"  cuda_runtime_api: {dev['cudaRuntimeGetVersion']}")
        out.append(f"  cuda_driver_api: {dev['cudaDriverGetVersion']}")
    out += [f"  torch: {fmt(v['torch'])}", f"  torch_cuda: {fmt(v['cuda'])}", f"  cudnn: {v['cudnn']}",
            f"  python: {fmt(v['python'])}", f"  nsight_compute: {fmt(ncu)}"]
    return out


def date_of(rec: Path) -> str:
    return (rec / "date.txt").read_text(encoding="utf-8").strip()


# -- 1. device attributes ------------------------------------------------------------------------
def write_device(rec: Path, out: Path) -> None:
    dev = load(rec / "device.json")
    a = dev["attributes"]
    lines = [
        "# CUDA device attributes of one NVIDIA H200 SXM, read on the GPU by benchmarks/gpu/capture_device_attrs.cu.",
        "# Every value is what the runtime returned (cudaDeviceGetAttribute); cross_checks holds the same figures read",
        "# through cudaGetDeviceProperties and the driver API's cuDeviceGetAttribute.",
        "schema: studytui-device-attributes/1",
        "accelerator: h200-sxm",
        f"date: {fmt(date_of(rec))}",
    ]
    lines += hardware_block(rec, dev)
    lines += software_block(rec, dev)
    lines += [
        "workload: 'a CUDA C++ program (nvcc -O2 -gencode=arch=compute_90a,code=sm_90a) that reads each attribute with",
        "  cudaDeviceGetAttribute, then asks for the largest persisting-L2 carve-out for its own context",
        "  (cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize)) and applies an access-policy window of",
        "  accessPolicyMaxWindowSize bytes to a stream running one kernel over that buffer, then resets both'",
        "precision: n/a (device attributes, integers)",
        "baseline: 'the 9.0 row of content/hardware/compute-capabilities/nvidia.yaml and NVIDIA''s H200 datasheet",
        "  (141 GB HBM3e, 4.8 TB/s); not a performance figure'",
        "correctness:",
        "  method: 'every call''s status checked (no error in any); the L2 figures read through three paths",
        "    (cudaDeviceGetAttribute, cudaGetDeviceProperties, cuDeviceGetAttribute) must agree, and do; the persisting",
        "    limit set to persistingL2CacheMaxSize reads back equal; the access-policy window is accepted and reads back'",
        f"  final_status: {fmt(dev['final_status'])}",
        "command: 'nvcc -O2 -gencode=arch=compute_90a,code=sm_90a -o capture_device_attrs",
        "  benchmarks/gpu/capture_device_attrs.cu && ./capture_device_attrs'",
        "attributes:",
    ]
    order = ["l2CacheSize", "persistingL2CacheMaxSize", "accessPolicyMaxWindowSize", "sharedMemPerBlock", "sharedMemPerBlockOptin",
             "sharedMemPerMultiprocessor", "reservedSharedMemPerBlock", "regsPerMultiprocessor", "regsPerBlock",
             "maxThreadsPerMultiProcessor", "maxThreadsPerBlock", "maxBlocksPerMultiProcessor", "multiProcessorCount", "warpSize",
             "clusterLaunch", "memoryBusWidth", "memoryClockRate", "clockRate", "totalConstMem", "eccEnabled", "cooperativeLaunch",
             "globalL1CacheSupported", "localL1CacheSupported", "memoryPoolsSupported", "pageableMemoryAccess", "asyncEngineCount"]
    for k in order:
        e = a[k]
        lines.append(f"  {k}: {{value: {e['value']}, unit: {fmt(e['unit'])}, cudaDeviceAttr: {e['enum']}}}")
    lines.append(f"  totalGlobalMem: {{value: {dev['totalGlobalMem']}, unit: \"bytes\", source: \"cudaDeviceProp.totalGlobalMem\"}}")
    l2, pers, win = a["l2CacheSize"]["value"], a["persistingL2CacheMaxSize"]["value"], a["accessPolicyMaxWindowSize"]["value"]
    pl = dev["persistingL2Limit"]
    aw = dev["accessPolicyWindowTest"]
    lines += [
        "derived:",
        f"  l2_mib: {l2 / 2**20}",
        f"  persisting_l2_max_mib: {pers / 2**20}",
        f"  persisting_fraction_of_l2: {round(pers / l2, 4)}",
        f"  access_policy_max_window_mib: {win / 2**20}",
        f"  shared_mem_per_sm_kib: {a['sharedMemPerMultiprocessor']['value'] / 1024}",
        f"  shared_mem_optin_per_block_kib: {a['sharedMemPerBlockOptin']['value'] / 1024}",
        f"  register_file_per_sm_kib: {a['regsPerMultiprocessor']['value'] * 4 // 1024}",
        f"  memory_bus_width_bits: {a['memoryBusWidth']['value']}",
        f"  memory_clock_mhz: {a['memoryClockRate']['value'] / 1000}",
        f"  peak_dram_bw_from_attributes_gbs: {round(2 * a['memoryClockRate']['value'] * 1e3 * a['memoryBusWidth']['value'] / 8 / 1e9, 1)}",
        "  peak_dram_bw_note: '2 x memoryClockRate x bus width / 8 (two transfers per memory clock); the datasheet says",
        "    4.8 TB/s; what copies achieved is in ../h200-sxm.yaml'",
        "persisting_l2_limit_test:",
        f"  default_limit_bytes: {pl['default']}",
        f"  asked_bytes: {pl['asked']}",
        f"  set_status: {fmt(pl['set_status'])}",
        f"  read_back_bytes: {pl['read_back']}",
        "  note: the default per-context persisting carve-out is 0.3 of the maximum here; it is a setting of the process's own context",
        "access_policy_window_test:",
        f"  num_bytes: {aw['num_bytes']}",
        f"  set_status: {fmt(aw['set'])}",
        f"  read_back_num_bytes: {aw['num_bytes_read_back']}",
        f"  kernel_status: {fmt(aw['kernel'])}",
        "cross_checks:",
        f"  cudaGetDeviceProperties: {fmt(dev['cudaGetDeviceProperties'])}",
        f"  cuDeviceGetAttribute: {fmt({k: v for k, v in dev['cuDeviceGetAttribute'].items() if k != 'status'})}",
        f"  cudaMemGetInfo: {fmt(dev['cudaMemGetInfo'])}",
    ]
    (out / "h200-sxm-device.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")


# -- 2. clusters ---------------------------------------------------------------------------------
def write_clusters(rec: Path, out: Path) -> dict:
    dev = load(rec / "device.json")
    cl = load(rec / "clusters.json")
    rows = cl["rows"]
    ok = [r for r in rows if r["status"] == "ok"]
    failed = [r for r in rows if r["status"] != "ok"]
    one = {r["size"]: r["max_active_clusters"] for r in ok if r["blocks_per_sm"] == 1 and r["how"].startswith("64 threads")}
    reviewer = {2: 66, 3: 39, 4: 30, 8: 15, 12: 7, 16: 7}
    exact = all(r["all_coresident"] == (r["launched_clusters"] == r["api_max_active_clusters"]) for r in cl["residency"]["rows"])
    mp = cl["maxPotentialClusterSize"]
    lines = [
        "# Thread-block cluster capacity of one NVIDIA H200 SXM: cudaOccupancyMaxActiveClusters, read on the GPU by",
        "# benchmarks/gpu/capture_clusters.cu. One row per (cluster dims, threads, dynamic shared memory) with the",
        "# occupancy calculator's blocks per SM for that configuration and the clusters the driver says fit at once.",
        "schema: studytui-cluster-capacity/1",
        "accelerator: h200-sxm",
        f"date: {fmt(date_of(rec))}",
    ]
    lines += hardware_block(rec, dev)
    lines += software_block(rec, dev)
    k = cl["kernel"]
    lines += [
        "workload:",
        f"  kernel: 'probe: one shared-memory store and load per block; {k['numRegs']} registers per thread (cudaFuncGetAttributes), "
        f"{k['staticSmem']} B static shared memory'",
        "  configurations: '64 threads with dynamic shared memory chosen (binary search, 128-B steps) as the largest giving",
        "    exactly 1..32 blocks per SM; threads alone (64..1024, no shared memory); a few threads + shared memory mixes'",
        "  cluster_sizes: 1..16 along x; shapes 2x1, 1x2, 2x2, 4x2, 2x4, 2x2x2, 4x4, 8x2, 3x4, ... at 1, 2, 4, 8, 16 blocks per SM",
        "  query: 'cudaOccupancyMaxActiveClusters(&n, probe, &config) with config.gridDim = cluster dims x (64, 2, 1),",
        "    the block size and dynamic shared memory of the row, and cudaLaunchAttributeClusterDimension'",
        "  nonportable: 'sizes 9..16 queried with cudaFuncAttributeNonPortableClusterSizeAllowed = 1 (the rows); without it",
        "    every one of them fails (see nonportable_without_attribute)'",
        "precision: n/a (integer resource counts)",
        "baseline: 'the naive bound floor(132 x blocks_per_sm / cluster_size), and the issue reviewer''s 1-block-per-SM figures",
        "  (66 clusters of 2, 39 of 3, 30 of 4, 15 of 8, 7 of 12, 7 of 16)'",
        "correctness:",
        "  method: 'every CUDA call checked; at 1 block per SM for each size 1..16, a real cluster launch of exactly",
        "    max_active_clusters clusters whose blocks each count in and wait (up to 200 ms, %globaltimer) for the whole grid:",
        "    all must arrive with none timing out (all co-resident); then max_active_clusters + 1 clusters, where blocks must time",
        "    out (they cannot all be resident at once). Both held for all 16 sizes: the API figure is exact, not a bound'",
        f"  residency_all_sizes_exact: {fmt(exact)}",
        f"max_potential_cluster_size: {{portable: {mp['portable']}, nonportable: {mp['nonportable']}}}",
        "portable_cluster_sizes: '1..8 (the portable limit: sizes up to 8 work with no attribute)'",
        "nonportable_cluster_sizes: '9..16 (only with cudaFuncAttributeNonPortableClusterSizeAllowed = 1)'",
        "nonportable_without_attribute: {sizes: [9, 10, 11, 12, 13, 14, 15, 16], rows_failed: "
        f"{len(failed)}, error: {fmt(sorted({r['status'] for r in failed})[0] if failed else '')}}}",
        "one_block_per_sm:",
        f"  config: {{threads: 64, dyn_smem: {cl['residency']['dyn_smem']}, blocks_per_sm: 1}}",
        f"  max_active_clusters_by_size: {fmt({s: one[s] for s in sorted(one)})}",
        f"  blocks_resident: {fmt({s: one[s] * s for s in sorted(one)})}",
        f"  reviewer_figures: {fmt(reviewer)}",
        f"  reviewer_confirmed: {fmt(all(one.get(s) == v for s, v in reviewer.items()))}",
        "  residency_check:",
    ]
    for r in cl["residency"]["rows"]:
        lines.append(f"  - {{size: {r['size']}, launched_clusters: {r['launched_clusters']}, blocks: {r['blocks']}, "
                     f"all_coresident: {fmt(r['all_coresident'])}, blocks_timed_out: {r['blocks_timed_out']}}}")
    lines += ["rows:"]
    for r in ok:
        cx, cy, cz = r["cluster"]
        lines.append(f"- {{cluster: [{cx}, {cy}, {cz}], size: {r['size']}, portable: {fmt(r['size'] <= 8)}, threads: {r['threads']}, "
                     f"dyn_smem: {r['dyn_smem']}, regs: {k['numRegs']}, blocks_per_sm: {r['blocks_per_sm']}, "
                     f"max_active_clusters: {r['max_active_clusters']}}}")
    (out / "h200-sxm-clusters.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return one


# -- 3. profiles ---------------------------------------------------------------------------------
RAW_COLS = [("gpu__time_duration.sum", "duration"), ("dram__bytes_read.sum", "dram_read"), ("dram__bytes_write.sum", "dram_write"),
            ("sm__throughput.avg.pct_of_peak_sustained_elapsed", "sm_throughput_pct"),
            ("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", "memory_throughput_pct"),
            ("sm__cycles_elapsed.avg.per_second", "sm_clock"), ("launch__grid_size", "grid"), ("launch__block_size", "block"),
            ("launch__registers_per_thread", "regs"), ("launch__shared_mem_per_block_dynamic", "dyn_smem"),
            ("launch__cluster_dim_x", "cluster_x"), ("launch__cluster_dim_y", "cluster_y"),
            ("sm__warps_active.avg.pct_of_peak_sustained_active", "achieved_occupancy_pct")]
SCALE = {"ms": 1e-3, "msecond": 1e-3, "us": 1e-6, "usecond": 1e-6, "ns": 1e-9, "nsecond": 1e-9, "s": 1.0, "second": 1.0,
         "byte": 1.0, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "Hz": 1.0, "Khz": 1e3, "Mhz": 1e6, "Ghz": 1e9, "KHz": 1e3, "MHz": 1e6,
         "GHz": 1e9, "Kbyte/block": 1e3, "byte/block": 1.0}


INT_KEYS = {"grid", "block", "regs", "cluster_x", "cluster_y", "dyn_smem", "dram_read", "dram_write"}


def kernel_table(raw_csv: Path) -> list[dict]:
    with open(raw_csv, encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    head, units, data = rows[0], rows[1], rows[2:]
    nvtx_col = next(i for i, c in enumerate(head) if c.startswith("thread Domain:Push/Pop_Range"))
    out = []
    for r in data:
        nv = r[nvtx_col]
        op = nv.split(":")[1] if ":" in nv else ""
        e: dict = {"id": int(r[head.index("ID")]), "op": op, "kernel": r[head.index("Kernel Name")][:120]}
        for col, key in RAW_COLS:
            if col not in head:
                continue
            i = head.index(col)
            val = r[i].replace(",", "")
            try:
                x = float(val) * SCALE.get(units[i], 1.0)
            except ValueError:
                continue
            e[key] = int(round(x)) if key in INT_KEYS else x
        if "duration" in e and "dram_read" in e:
            e["dram_bw_gbs"] = round((e["dram_read"] + e.get("dram_write", 0.0)) / e["duration"] / 1e9, 1)
        out.append(e)
    return out


def sections(details_csv: Path) -> list[str]:
    with open(details_csv, encoding="utf-8") as fh:
        seen: list[str] = []
        for r in csv.DictReader(fh):
            s = r["Section Name"]
            if s not in seen:
                seen.append(s)
    return seen


def write_profiles(rec: Path, out: Path) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    copies = ["ops-full-raw.csv", "ops-full-details.csv", "ops-default-raw.csv", "ops-default-details.csv",
              "llama8b-layer-prefill-decode.trace.json.gz", "llama8b-layer-key-averages.txt"]
    for name in copies:
        shutil.copyfile(rec / name, out / name)
    dev = load(rec / "device.json")
    ops = load(rec / "ops-full.json")
    ops_default = load(rec / "ops-default.json")
    kern = load(rec / "ops-kernels.json")
    layer = load(rec / "llama8b-layer.json")
    full = kernel_table(rec / "ops-full-raw.csv")
    default = kernel_table(rec / "ops-default-raw.csv")
    sec_full, sec_default = sections(rec / "ops-full-details.csv"), sections(rec / "ops-default-details.csv")
    sizes = {name: os.path.getsize(out / name) for name in copies}
    ncu_cmd = ("ncu --profile-from-start off --nvtx --clock-control none {set}--launch-count 80 -f -o ops-{tag} "
               "python3 benchmarks/gpu/capture_ncu_ops.py --mode ncu --out ops-{tag}.json")
    export = ("ncu -i ops-{tag}.ncu-rep --csv --page raw > ops-{tag}-raw.csv; "
              "ncu -i ops-{tag}.ncu-rep --csv --page details > ops-{tag}-details.csv")
    lines = [
        "# Records of the Nsight Compute exports and the PyTorch profiler trace in this folder, each with the guide's five",
        "# fields. Captured by benchmarks/gpu/capture_h200_records.sh, written by benchmarks/gpu/write_h200_records.py.",
        "schema: studytui-profile-records/1",
        f"date: {fmt(date_of(rec))}",
    ]
    lines += hardware_block(rec, dev)
    lines += software_block(rec, dev)
    lines += [
        "capture_command: 'OUT=DIR bash benchmarks/gpu/capture_h200_records.sh",
        "  (steps env attrs clusters trace ncu_list ncu_default ncu_full)'",
        "ncu_reports_dropped: 'ops-full.ncu-rep (39 MB) and ops-default.ncu-rep (24 MB) were over the size limit and are not",
        "  kept; the CSV exports below are complete for every profiled kernel'",
        "files:",
    ]
    correctness_ops = [{"op": o["name"], "error": o["correctness"]["error"], "tolerance": o["correctness"]["tolerance"],
                        "passed": o["correctness"]["passed"]} for o in ops["ops"]]
    ops_workload = [f"{o['name']}: {o['what']}" for o in ops["ops"]]
    for tag, set_arg, secs, table, opsrec in (("full", "--set full ", sec_full, full, ops),
                                               ("default", "", sec_default, default, ops_default)):
        for page in ("raw", "details"):
            name = f"ops-{tag}-{page}.csv"
            layout = "one row per kernel, every collected metric a column" if page == "raw" else \
                "one row per section metric and rule result per kernel"
            which = "--set full" if tag == "full" else "default set (no --set)"
            results = [{"op": o["name"], "error": round(o["correctness"]["error"], 9), "tolerance": o["correctness"]["tolerance"],
                        "passed": o["correctness"]["passed"]} for o in opsrec["ops"]]
            lines += [
                f"- file: {name}",
                f"  bytes: {sizes[name]}",
                f"  what: 'Nsight Compute {which} report, exported with --csv --page {page}: {layout}'",
                f"  kernels: {len(table)}",
                f"  sections: {fmt(secs)}",
                "  hardware: see hardware above (the same H200, the same machine and run)",
                "  workload:",
                "    ops: " + fmt(ops_workload),
                "    region: 'each operation once, in its own NVTX push/pop range (the NVTX column of every row names it),",
                "      between torch.cuda.profiler.start() and stop(); warm-up and checks outside the region'",
                f"    command: {fmt(ncu_cmd.format(set=set_arg, tag=tag))}",
                f"    export: {fmt(export.format(tag=tag))}",
                "    replay: 'kernel replay (ncu default), caches flushed between passes (--cache-control all, default),",
                "      clocks not locked'",
                "  precision: per op (bf16 GEMMs with fp32 accumulate; fp8 e4m3 GEMM with bf16 out; fp32 add and sum; bf16 softmax,",
                "    layer norm and attention)",
                "  baseline: 'ncu''s own percent-of-peak (SpeedOfLight) per kernel; for a roofline, the vendor peaks 989 TFLOP/s",
                "    bf16, 1979 fp8, 4.8 TB/s, or the measured ceilings in content/hardware/measured/h200-sxm.yaml'",
                "  correctness:",
                "    method: 'each operation''s output checked against float64 before the profiled region, in the same process:",
                "      GEMMs 64 sampled rows, attention 4 sampled heads (decode: all), softmax/layer norm 64 rows, add exact, sum",
                "      relative; outputs poisoned with NaN where the op takes out= (matmul, add), else checked finite'",
                f"    results: {fmt(results)}",
            ]
    lines += [
        "- file: llama8b-layer-prefill-decode.trace.json.gz",
        f"  bytes: {sizes['llama8b-layer-prefill-decode.trace.json.gz']}",
        "  what: 'torch.profiler chrome trace (gzip), activities CPU + CUDA, record_shapes=True: one prefill step inside",
        "    record_function(\"prefill\") and one decode step inside record_function(\"decode\"), after 3 untimed warm-ups'",
        "  hardware: see hardware above",
        "  workload:",
        "    model: 'one Llama-3.1-8B-shaped decoder layer, random bf16 weights: RMSNorm, q/k/v projections (hidden 4096, 32 query",
        "      heads, 8 KV heads, head dim 128), RoPE theta 500000, F.scaled_dot_product_attention(enable_gqa=True), o projection,",
        "      residual, RMSNorm, SwiGLU MLP (intermediate 14336), residual; eager PyTorch, no torch.compile'",
        f"    prefill: {fmt(layer['shapes']['prefill'])}",
        f"    decode: {fmt(layer['shapes']['decode'])}",
        "    kv_cache: 'decode: preallocated for 2049 tokens, 2048 random, the new token''s K/V written in place'",
        f"    weight_params: {layer['layer_weight_params']}",
        f"    flops_estimate: {fmt({'prefill': layer['flops_estimate']['prefill'], 'decode': layer['flops_estimate']['decode']})}",
        "    command: 'python3 benchmarks/gpu/capture_trace_layer.py --out-dir DIR'",
        f"    kernels_in_trace: {fmt({k: len(v) for k, v in layer['kernels_in_trace'].items()})}",
        f"    gpu_kernel_time_us: {fmt({k: round(sum(x['us'] or 0 for x in v), 1) for k, v in layer['kernels_in_trace'].items()})}",
        "  precision: bf16 weights and activations (fp32 accumulate in the GEMMs, RMSNorm and RoPE in fp32)",
        "  baseline: 'none in the trace; the timing below against the roofline: prefill 0.93 TFLOP at 989 TFLOP/s is 0.94 ms;",
        "    decode reads 436 MB of weights plus 67 MB of KV cache, 0.10 ms at 4.8 TB/s'",
        "  timing:",
        f"    prefill_s: {fmt({k: v for k, v in layer['timing']['prefill'].items()})}",
        f"    decode_s: {fmt({k: v for k, v in layer['timing']['decode'].items()})}",
        f"    method: {fmt(layer['timing']['method'])}",
        "  correctness:",
        f"    method: {fmt(layer['correctness']['method'])}",
        f"    prefill: {fmt(layer['correctness']['results']['prefill'])}",
        f"    decode: {fmt(layer['correctness']['results']['decode'])}",
        "- file: llama8b-layer-key-averages.txt",
        f"  bytes: {sizes['llama8b-layer-key-averages.txt']}",
        "  what: prof.key_averages().table(sort_by=\"cuda_time_total\", row_limit=40) of the same trace",
        "ops_kernels_without_ncu:",
        "  what: 'the kernels each operation launched, from torch.profiler in a separate run (no ncu), in order'",
    ]
    for o in kern["ops"]:
        lines.append(f"  {o['name']}: {fmt([k[:100] for k in o['kernels']])}")
    lines += ["ncu_full_kernel_summary:",
              "  what: 'from ops-full-raw.csv: duration (s), DRAM bytes (read, write), DRAM GB/s, SM and memory throughput (% of",
              "    peak), SM clock (Hz) during the kernel, launch shape; kernel names cut at 120 characters'",
              "  kernels:"]
    for e in full:
        lines.append("  - " + fmt({k: (round(v, 9) if isinstance(v, float) and v < 1 else (round(v, 3) if isinstance(v, float) else v))
                                   for k, v in e.items()}))
    (out / "records.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return {"full": full, "sections_full": sec_full, "sections_default": sec_default, "sizes": sizes, "layer": layer,
            "correctness": correctness_ops}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", required=True, help="folder holding the unpacked records.tar.gz")
    ap.add_argument("--root", default=str(ROOT))
    args = ap.parse_args(argv)
    rec, root = Path(args.records), Path(args.root)
    dev_out = root / "content" / "hardware" / "measured" / "device"
    dev_out.mkdir(parents=True, exist_ok=True)
    write_device(rec, dev_out)
    one = write_clusters(rec, dev_out)
    prof = write_profiles(rec, root / "content" / "profiles" / "h200")
    print("clusters at 1 block/SM:", one)
    print("ncu full sections:", prof["sections_full"])
    print("ncu default sections:", prof["sections_default"])
    print("sizes:", prof["sizes"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
