#!/usr/bin/env bash
# bash .dbg/s80/call2.sh <full sha>, carry .whl-nb3 (notebook wheels less ncu-report, debugpy, jedi; FA3) and .dbg/s80:
# a copy check first (the last H100 corrupted copies: stop at once on such a GPU); the GPU test files touched since
# they last ran; on an H200 notebooks 00 02 03 04 live and recorded; then the decode GPU tests with the time left.
T0=$(date +%s); touch /tmp/start
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-nb3/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache
export LABKIT_GIT_SHA=$1
left() { echo $(( ${BUDGET:-300} - ($(date +%s) - T0) )); }
{ nvidia-smi --query-gpu=name,uuid,driver_version,vbios_version,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
  nvidia-smi -q | grep -E "Board Part" | head -1; } > $OUT/device.txt 2>&1; cat $OUT/device.txt
python3 -c "
import cupy as cp
for n in (1 << 20, 1 << 28):
    a = cp.random.rand(n, dtype=cp.float32); b = cp.empty_like(a); b[...] = a
    assert bool((a == b).all()), f'a copy of {n} float32 differs'
print('copy check ok')" 2>&1 | tail -1 | tee $OUT/copy_check.txt
grep -q "copy check ok" $OUT/copy_check.txt || { echo "this GPU corrupts copies: nothing else run"; exit 0; }
for t in test_sched_gpu test_timing_gpu test_manifest_gpu test_sage2_gpu; do
  timeout $(( $(left) - 40 )) python3 -m pytest -q -rs -p no:cacheprovider -m gpu tests/gpu/$t.py > $OUT/$t.log 2>&1
  echo "$t rc=$? $(tail -1 $OUT/$t.log) at $(( $(date +%s) - T0 )) s" | tee -a $OUT/summary.txt
  grep -E "^(FAILED|ERROR)" $OUT/$t.log | head -6 | cut -c1-400
done
if [ -n "${NOTEBOOKS:-}" ] && grep -q H200 $OUT/device.txt; then
  for nb in 00 02 03 04; do
    [ $(left) -gt 100 ] || { echo "nb $nb: not run (time)" | tee -a $OUT/summary.txt; continue; }
    timeout $(( $(left) - 20 )) python3 -m labkit nb run $nb --record > $OUT/nb_$nb.log 2>&1
    echo "nb $nb rc=$? at $(( $(date +%s) - T0 )) s" | tee -a $OUT/summary.txt; grep -E "FAILED|LIVE|notebook:" $OUT/nb_$nb.log | head -3 | cut -c1-300
  done
  tar czf $OUT/records.tgz $(find data/runs -mindepth 1 -maxdepth 1 -newer /tmp/start) 2>/dev/null
fi
if [ $(left) -gt 60 ]; then
  timeout $(( $(left) - 10 )) python3 -m pytest -v -rs -p no:cacheprovider -m gpu tests/gpu/test_decode_gpu.py > $OUT/test_decode_gpu.log 2>&1
  echo "test_decode_gpu rc=$? $(tail -1 $OUT/test_decode_gpu.log | cut -c1-200) at $(( $(date +%s) - T0 )) s" | tee -a $OUT/summary.txt
  grep -E "^(FAILED|ERROR)" $OUT/test_decode_gpu.log | head -6 | cut -c1-400
  echo "decode tests: $(grep -c ' PASSED' $OUT/test_decode_gpu.log) passed, $(grep -c ' FAILED' $OUT/test_decode_gpu.log) failed, $(grep -c ' SKIPPED' $OUT/test_decode_gpu.log) skipped"
fi
echo "elapsed $(( $(date +%s) - T0 )) s"
