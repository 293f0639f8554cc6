#!/usr/bin/env bash
# One call at SHA, carry [".whl-fa3", ".dbg/either.sh"] (the ncu-report wheel does not fit beside FA3: 23 MB of tree). On an H200: make bench's two commands (#10's table).
# On anything else: the GPU test files other than the decode one (last run at 3feb10e), a live ncu run whose printed
# command is pasted back into bash, then make bench's two commands with the time left.
T0=$(date +%s)
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-fa3/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache
export LABKIT_GIT_SHA=$1 LABKIT_NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
nvidia-smi --query-gpu=name,uuid,driver_version,vbios_version,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw --format=csv | tee $OUT/smi.csv
nvidia-smi -q | grep -E "Board Part" | head -1 | tee -a $OUT/smi.csv
left() { echo $(( 585 - ($(date +%s) - T0) )); }
bench() {
  timeout $(( $(left) / 3 )) python3 -m labkit bench --schedule sm90 > $OUT/sage2_bench.log 2>&1; echo "rc=$?" >> $OUT/sage2_bench.log
  tail -14 $OUT/sage2_bench.log | cut -c1-200
  [ $(left) -gt 30 ] || { echo "decode bench: not run (time)"; return; }
  timeout $(left) python3 -m labkit decode bench --peers --out $OUT/decode_sweep.json > $OUT/decode_sweep.log 2>&1; echo "rc=$?" >> $OUT/decode_sweep.log
  tail -32 $OUT/decode_sweep.log | cut -c1-200
}
if grep -q H200 $OUT/smi.csv; then bench; echo "elapsed $(( $(date +%s) - T0 )) s"; exit 0; fi
for f in test_timing_gpu test_manifest_gpu test_sched_gpu test_sage2_gpu; do
  [ $(left) -gt 60 ] || { echo "$f: not run (time)" | tee -a $OUT/summary.txt; continue; }
  timeout $(left) python3 -m pytest -q -rs -p no:cacheprovider -m gpu tests/gpu/$f.py > /tmp/$f.log 2>&1
  echo "$f rc=$? $(tail -1 /tmp/$f.log) at $(( $(date +%s) - T0 )) s" | tee -a $OUT/summary.txt
done
grep -h -E "^(FAILED|ERROR|SKIPPED)" /tmp/test_*.log | head -20 | tee -a $OUT/summary.txt
python3 - > $OUT/ncu_command.txt 2>&1 <<'PY'
import io, subprocess, sys
from pathlib import Path
from labkit.ncu import runner
from labkit.ncu.command import NcuOptions
metrics = ("gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum",
           "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active", "lts__t_sector_hit_rate.pct")
opts = NcuOptions(output=Path("/tmp/ncu_demo/r"), preset="timing", metrics=metrics, launch_count=2)
target = [sys.executable, "-c", "import cupy as cp; a = cp.ones(1 << 24, cp.float32); b = a * 2; cp.cuda.Device().synchronize()"]
out = io.StringIO()
try:
    run = runner.profile(target, opts, progress=out)
finally:
    print(out.getvalue())
lines = out.getvalue().splitlines()
end = next(i for i, line in enumerate(lines) if not line.endswith("\\"))
cmd = "\n".join(lines[:end + 1]).removeprefix("running:")
argv = subprocess.run(["bash", "-c", "printf '%s\\0' " + cmd], capture_output=True, text=True, check=True).stdout.split("\0")[:-1]
print("command lines:", end + 1, "widest:", max(map(len, lines[:end + 1])))
print("bash argv == the command ncu ran:", argv == list(run.command))
print("report:", run.report, run.report_bytes, "bytes")
PY
echo "ncu demo rc=$?"; tail -25 $OUT/ncu_command.txt | cut -c1-200
bench
echo "elapsed $(( $(date +%s) - T0 )) s"
