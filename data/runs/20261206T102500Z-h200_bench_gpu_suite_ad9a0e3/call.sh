#!/usr/bin/env bash
# bash .dbg/s86/call.sh <full sha>, carry .whl-fa3 (FA3 0.0.3, einops, nvtx) and .dbg/s86.
# FA3 installed into .site/ (git-ignored, so a second call on the same warm machine finds it); copy check; issue #10's
# decode sweep beside its peers with its split sweeps; then every GPU test file, the decode file with the time left.
T0=$(date +%s)
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target $PWD/.site .whl-fa3/*.whl 2>&1 | tail -2
export PYTHONPATH=$PWD/.site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache
export LABKIT_GIT_SHA=$1
NCUPY=$(find /usr/local/cuda*/ /opt/nvidia -name ncu_report.py 2>/dev/null | head -1)
if ! python3 -c "import ncu_report" 2>/dev/null && [ -n "$NCUPY" ]; then export PYTHONPATH=$PYTHONPATH:$(dirname $NCUPY); fi
left() { echo $(( ${BUDGET:-565} - ($(date +%s) - T0) )); }
{ nvidia-smi --query-gpu=name,uuid,driver_version,vbios_version,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw,power.limit --format=csv
  nvidia-smi -q | grep -E "Board Part" | head -1; } > $OUT/device.txt 2>&1; cat $OUT/device.txt
echo "ncu_report: $(python3 -c 'import ncu_report; print(ncu_report.__file__)' 2>&1 | tail -1)" | tee -a $OUT/device.txt
python3 -c "
import cupy as cp
for n in (1 << 20, 1 << 28):
    a = cp.random.rand(n, dtype=cp.float32); b = cp.empty_like(a); b[...] = a
    assert bool((a == b).all()), f'a copy of {n} float32 differs'
print('copy check ok')" 2>&1 | tail -1 | tee $OUT/copy_check.txt
grep -q "copy check ok" $OUT/copy_check.txt || { echo "this GPU corrupts copies: nothing else run"; exit 0; }
python3 -m labkit device --json > $OUT/device.json 2>&1
timeout 200 python3 -m labkit decode bench --peers --sweep-splits --out $OUT/sweep.json > $OUT/sweep.log 2>&1
echo "decode bench --peers --sweep-splits rc=$? at $(( $(date +%s) - T0 )) s" | tee $OUT/summary.txt
[ -f $OUT/sweep.json ] && python3 -m labkit report show $OUT/sweep.json > $OUT/show.txt 2>&1
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader >> $OUT/device.txt
grep -vE "^\s*\[[0-9]+\]" $OUT/sweep.log | cut -c1-200 | tail -40
gpu_tests() {
  for t in "$@"; do
    [ $(left) -gt 40 ] || { echo "$t: not run (time)" | tee -a $OUT/summary.txt; continue; }
    timeout $(( $(left) - 10 )) python3 -m pytest -v -rs -p no:cacheprovider -m gpu tests/gpu/$t.py > $OUT/$t.log 2>&1
    echo "$t rc=$? $(tail -1 $OUT/$t.log | cut -c1-160) at $(( $(date +%s) - T0 )) s" | tee -a $OUT/summary.txt
    grep -E "^(FAILED|ERROR)|SKIPPED" $OUT/$t.log | head -8 | cut -c1-400
  done
}
gpu_tests test_ncu_gpu test_sched_gpu test_timing_gpu test_manifest_gpu test_sage2_gpu test_decode_gpu
echo "decode tests: $(grep -c ' PASSED' $OUT/test_decode_gpu.log) passed, $(grep -c ' FAILED' $OUT/test_decode_gpu.log) failed, $(grep -c ' SKIPPED' $OUT/test_decode_gpu.log) skipped" | tee -a $OUT/summary.txt
grep -E ' (PASSED|FAILED|SKIPPED)' $OUT/test_decode_gpu.log | sed -E 's/ (PASSED|FAILED|SKIPPED).*//' > $OUT/decode_done_ids.txt
cp $OUT/decode_done_ids.txt .site/done_ids.txt
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $OUT/summary.txt
tar -C $OUT -czf /tmp/logs.tgz $(cd $OUT && ls *.log 2>/dev/null) && rm -f $OUT/*.log && mv /tmp/logs.tgz $OUT/logs.tgz
