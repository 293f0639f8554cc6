#!/usr/bin/env bash
# This session's GPU calls at main's HEAD (full sha as $1); call one carries [".whl-gpu", ".dbg/gpu_d.sh"] (nvtx, fa3-fwd, einops), call two .whl-ncu (ncu_report) and .dbg/one_decode.log.
#   one   make bench's two commands, then the GPU test files in order, decode tests -v so call two can run the rest
#   two   the decode tests call one left (by id), then the Sage2 tests
T0=$(date +%s)
set -uo pipefail
if [ "$2" = h200 ] || [ "$2" = h200b ]; then nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 || { nvidia-smi -L; echo "not an H200: nothing run"; exit 0; }; fi
for d in .whl-gpu .whl-ncu; do [ -d $d ] && python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site $d/*.whl 2>&1 | tail -2; done
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache
export LABKIT_GIT_SHA=$1 LABKIT_NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
nvidia-smi --query-gpu=name,uuid,driver_version,vbios_version,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw,power.limit --format=csv | tee $OUT/smi_$2.csv
nvidia-smi -q | grep -E "Board Part" | head -1 | tee -a $OUT/smi_$2.csv
left() { echo $(( $3 - ($(date +%s) - T0) )); }
case "$2" in
h200b)  # only on an H200: make bench's two commands, nothing else (the device time left is short)
  timeout 100 python3 -m labkit bench --schedule sm90 > $OUT/sage2_bench.log 2>&1; echo "rc=$?" >> $OUT/sage2_bench.log
  tail -12 $OUT/sage2_bench.log | cut -c1-200
  timeout 150 python3 -m labkit decode bench --peers --out $OUT/decode_sweep.json > $OUT/decode_sweep.log 2>&1; echo "rc=$?" >> $OUT/decode_sweep.log
  tail -32 $OUT/decode_sweep.log | cut -c1-250 ;;
h200)  # only on an H200: call one's work, its logs in one tarball (a call brings back at most 8 files)
  mkdir -p /tmp/o; OUT0=$OUT; export OUT=/tmp/o DEADLINE=560
  bash "$0" "$1" one; cp /tmp/o/summary.txt $OUT0/ 2>/dev/null; tar -C /tmp/o -czf $OUT0/h200.tgz . ; exit 0 ;;
one)
  s=$(date +%s); timeout 200 python3 -m labkit bench --schedule sm90 > $OUT/sage2_bench.log 2>&1; echo "rc=$? $(( $(date +%s) - s )) s" >> $OUT/sage2_bench.log
  tail -14 $OUT/sage2_bench.log | cut -c1-200
  s=$(date +%s); timeout 240 python3 -m labkit decode bench --peers --out $OUT/decode_sweep.json > $OUT/decode_sweep.log 2>&1; echo "rc=$? $(( $(date +%s) - s )) s" >> $OUT/decode_sweep.log
  tail -32 $OUT/decode_sweep.log | cut -c1-250
  for f in test_timing_gpu test_manifest_gpu test_sched_gpu test_decode_gpu; do
    l=$(( ${DEADLINE:-575} - ($(date +%s) - T0) )); [ $l -gt 20 ] || { echo "$f: not run (time)" | tee -a $OUT/summary.txt; continue; }
    timeout $l python3 -m pytest -v -rs -p no:cacheprovider -m gpu tests/gpu/$f.py > $OUT/$f.log 2>&1
    echo "$f rc=$? $(tail -1 $OUT/$f.log) at $(( $(date +%s) - T0 )) s" | tee -a $OUT/summary.txt
  done ;;
two)
  python3 -m pytest -q --co -p no:cacheprovider -m gpu tests/gpu/test_decode_gpu.py 2>/dev/null | grep "::" > /tmp/ids.txt
  grep -oE "^tests/gpu/test_decode_gpu.py::[^ ]+ (PASSED|SKIPPED|FAILED|ERROR)" .dbg/one_decode.log | cut -d' ' -f1 | sort > /tmp/done.txt
  grep -vxF -f /tmp/done.txt /tmp/ids.txt > $OUT/decode_rest_ids.txt; wc -l /tmp/ids.txt /tmp/done.txt $OUT/decode_rest_ids.txt
  if [ -s $OUT/decode_rest_ids.txt ]; then
    timeout 300 python3 -m pytest -v -rs -p no:cacheprovider -m gpu $(cat $OUT/decode_rest_ids.txt) > $OUT/test_decode_gpu_rest.log 2>&1
    echo "decode rest rc=$? $(tail -1 $OUT/test_decode_gpu_rest.log) at $(( $(date +%s) - T0 )) s" | tee -a $OUT/summary.txt
  fi
  timeout 120 python3 -m pytest -q -rs -p no:cacheprovider -m gpu tests/gpu/test_ncu_gpu.py > $OUT/test_ncu_gpu.log 2>&1
  echo "test_ncu_gpu rc=$? $(tail -1 $OUT/test_ncu_gpu.log) at $(( $(date +%s) - T0 )) s" | tee -a $OUT/summary.txt
  l=$(( 580 - ($(date +%s) - T0) ))
  timeout $l python3 -m pytest -q -rs -p no:cacheprovider -m gpu tests/gpu/test_sage2_gpu.py > $OUT/test_sage2_gpu.log 2>&1
  echo "test_sage2_gpu rc=$? $(tail -1 $OUT/test_sage2_gpu.log) at $(( $(date +%s) - T0 )) s" | tee -a $OUT/summary.txt ;;
esac
grep -h -E "(FAILED|ERROR)" $OUT/test_*.log 2>/dev/null | head -20
echo "elapsed $(( $(date +%s) - T0 )) s"
