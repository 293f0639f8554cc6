# bash .dbg/s71/gpu.sh <full sha>; carry .whl_nbl, .whl_ncu, .dbg/s71: every GPU test (-s, so the Sage2 tests' worst rows
# are printed) at HEAD, which has the decode _check on reference_and_bound and the Sage2 per-row bound, never run on a GPU
T0=$(date +%s)
R=/tmp/res71; rm -rf $R; mkdir -p $R; trap 'cp $R/* $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nbl/*.whl .whl_ncu/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
{ nvidia-smi --query-gpu=name,uuid,driver_version,vbios_version,clocks.sm,clocks.mem --format=csv,noheader
  nvidia-smi -q | grep -E "Board Part" | head -1; python3 -m labkit device; } > $R/device.txt 2>&1
cat $R/device.txt
timeout 555 python3 -m pytest -q -s -rs -p no:cacheprovider -m gpu tests/gpu --durations=8 > $R/gpu_tests.log 2>&1
echo "pytest rc $?"
grep -E "worst row|'worst_row'" $R/gpu_tests.log | sed -E 's/.*(\([0-9, ]+\)) (NHD|HND) (bf16|fp16) ([0-9.]+) ([0-9.]+) ([0-9]+) .*worst row ([0-9.]+).*/e2e \1 \2 \3 kb\4 vb\5 t\6 worst \7/' > $R/worst_rows.txt
python3 - $R/gpu_tests.log > $R/worst_summary.txt <<'PY'
import re, sys
t = open(sys.argv[1]).read()
e2e = [float(x) for x in re.findall(r"worst row ([0-9.]+) at", t)]
sm90 = [float(x) for x in re.findall(r"'worst_row': ([0-9.e-]+)", t)]
print(f"end-to-end: {len(e2e)} cases, worst row max {max(e2e, default=float('nan')):.4f}")
print(f"sm90 vs seed: {len(sm90)} values, worst row max {max(sm90, default=float('nan')):.4f}")
PY
cat $R/worst_summary.txt
tail -25 $R/gpu_tests.log
echo "elapsed $(( $(date +%s) - T0 )) s"
