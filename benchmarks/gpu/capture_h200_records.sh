#!/usr/bin/env bash
# Capture the H200 hardware records on a GPU machine, from the repository root:
#
#   OUT=/some/dir bash benchmarks/gpu/capture_h200_records.sh [steps...]
#
# steps (default: all): env attrs clusters trace ncu_list ncu_default ncu_full
# Writes under $OUT: records.tar.gz (the JSON, CSV, text and trace files), and the .ncu-rep reports
# when they are under 15 MiB each. Then, on the workstation, benchmarks/gpu/write_h200_records.py
# turns them into content/hardware/measured/... and content/profiles/h200/.
# Each step is independent: a failing one is logged and the others still run.
set -u
OUT=${OUT:-/tmp/h200-records-out}
W=${WORK:-/tmp/h200-records}
mkdir -p "$OUT" "$W"
STEPS=${*:-env attrs clusters trace ncu_list ncu_default ncu_full}
PY=${PYTHON:-python3}
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1 || true)
HERE=benchmarks/gpu
log() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$W/steps.log"; }
has() { case " $STEPS " in *" $1 "*) return 0;; *) return 1;; esac; }
pack() {  # after every step, so that a run stopped at its time limit still returns what it made
  ( cd "$W" && tar czf "$OUT/records.tar.gz.tmp" --exclude='*.ncu-rep' --exclude='capture_device_attrs' --exclude='capture_clusters' . ) \
    && mv "$OUT/records.tar.gz.tmp" "$OUT/records.tar.gz"
  for r in "$W"/*.ncu-rep; do
    [ -f "$r" ] || continue
    [ -f "$OUT/$(basename "$r")" ] && continue
    size=$(stat -c %s "$r")
    if [ "$size" -lt 15000000 ]; then cp "$r" "$OUT/"; else echo "$(basename "$r") is $size bytes: not returned" >> "$W/steps.log"; fi
  done
}
export PYTHONUNBUFFERED=1

if has env; then
  log "env"
  date -u +%Y-%m-%dT%H:%M:%SZ > "$W/date.txt"
  nvidia-smi > "$W/nvidia-smi.txt" 2>&1
  nvidia-smi -q > "$W/nvidia-smi-q.txt" 2>&1
  nvidia-smi --query-gpu=name,pci.bus_id,driver_version,memory.total,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,power.limit,temperature.gpu,persistence_mode,compute_mode,mig.mode.current \
    --format=csv > "$W/smi-before.csv" 2>&1
  { nvcc --version; echo; "$NCU" --version; echo; uname -a; } > "$W/tools.txt" 2>&1
  $PY - > "$W/versions.json" 2>&1 <<'EOF'
import json, platform, torch
print(json.dumps({"python": platform.python_version(), "torch": torch.__version__, "cuda": torch.version.cuda,
                  "cudnn": torch.backends.cudnn.version(), "device": torch.cuda.get_device_name(0),
                  "capability": list(torch.cuda.get_device_capability(0)),
                  "sm_count": torch.cuda.get_device_properties(0).multi_processor_count,
                  "total_memory": torch.cuda.get_device_properties(0).total_memory}))
EOF
  cat "$W/versions.json"
  pack
fi

if has attrs; then
  log "attrs: build and run"
  nvcc -O2 -gencode=arch=compute_90a,code=sm_90a -o "$W/capture_device_attrs" "$HERE/capture_device_attrs.cu" > "$W/attrs-build.txt" 2>&1 \
    && "$W/capture_device_attrs" > "$W/device.json" 2> "$W/device.err"
  log "attrs rc=$?"; head -c 600 "$W/device.json"; echo
  pack
fi

if has clusters; then
  log "clusters: build and run"
  nvcc -O2 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v -o "$W/capture_clusters" "$HERE/capture_clusters.cu" > "$W/clusters-build.txt" 2>&1 \
    && timeout 120 "$W/capture_clusters" > "$W/clusters.json" 2> "$W/clusters.err"
  log "clusters rc=$?"; grep -A40 '"residency"' "$W/clusters.json" | head -40
  pack
fi

if has trace; then
  log "trace: decoder layer"
  timeout 200 $PY "$HERE/capture_trace_layer.py" --out-dir "$W" > "$W/trace.log" 2>&1
  log "trace rc=$?"; tail -5 "$W/trace.log"
  pack
fi

if has ncu_list; then
  log "ncu_list: kernels per operation (torch.profiler, no ncu)"
  timeout 180 $PY "$HERE/capture_ncu_ops.py" --mode list --out "$W/ops-kernels.json" > "$W/ops-list.log" 2>&1
  log "ncu_list rc=$?"; cat "$W/ops-list.log" | tail -14
  pack
fi

export_csv() {  # $1 = report basename
  "$NCU" -i "$W/$1.ncu-rep" --csv --page raw > "$W/$1-raw.csv" 2> "$W/$1-export.err"
  "$NCU" -i "$W/$1.ncu-rep" --csv --page details > "$W/$1-details.csv" 2>> "$W/$1-export.err"
  "$NCU" -i "$W/$1.ncu-rep" --csv --page raw --print-nvtx-rename kernel --print-units base \
    --metrics gpu__time_duration.sum,dram__bytes.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size,launch__block_size,launch__registers_per_thread \
    > "$W/$1-summary.csv" 2>> "$W/$1-export.err"
  ls -la "$W/$1"*
}

if has ncu_default; then
  log "ncu_default: default section set"
  timeout 150 "$NCU" --profile-from-start off --nvtx --clock-control none --launch-count 80 -f -o "$W/ops-default" \
    $PY "$HERE/capture_ncu_ops.py" --mode ncu --out "$W/ops-default.json" > "$W/ncu-default.log" 2>&1
  log "ncu_default rc=$?"; tail -5 "$W/ncu-default.log"
  [ -f "$W/ops-default.ncu-rep" ] && export_csv ops-default
  pack
fi

if has ncu_full; then
  log "ncu_full: --set full"
  timeout 300 "$NCU" --profile-from-start off --nvtx --clock-control none --set full --launch-count 80 -f -o "$W/ops-full" \
    $PY "$HERE/capture_ncu_ops.py" --mode ncu --out "$W/ops-full.json" > "$W/ncu-full.log" 2>&1
  log "ncu_full rc=$?"; tail -5 "$W/ncu-full.log"
  [ -f "$W/ops-full.ncu-rep" ] && export_csv ops-full
  pack
fi

nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$W/smi-after.csv" 2>&1
pack
ls -la "$OUT"
cat "$W/steps.log"
