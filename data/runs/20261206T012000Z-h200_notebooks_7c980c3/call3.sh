#!/usr/bin/env bash
# bash .dbg/s80/call3.sh <full sha>, carry $WHEELS (default .whl: the notebook wheels) and .dbg/s80: a copy check, then
# the six notebooks live and recorded (labkit nb run-all --record), their records tarred back.
T0=$(date +%s); touch /tmp/start
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site ${WHEELS:-.whl}/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache
export LABKIT_GIT_SHA=$1
# without the ncu-report wheel (FA3's fills the carry): the reader Nsight Compute ships beside ncu
NCUPY=$(find /usr/local/cuda*/ /opt/nvidia -name ncu_report.py 2>/dev/null | head -1)
if ! python3 -c "import ncu_report" 2>/dev/null && [ -n "$NCUPY" ]; then export PYTHONPATH=$PYTHONPATH:$(dirname $NCUPY); fi
echo "ncu_report: $(python3 -c 'import ncu_report; print(ncu_report.__file__)' 2>&1 | tail -1)"
{ nvidia-smi --query-gpu=name,uuid,driver_version,vbios_version,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
  nvidia-smi -q | grep -E "Board Part" | head -1; } > $OUT/device.txt 2>&1; cat $OUT/device.txt
python3 -c "
import cupy as cp
for n in (1 << 20, 1 << 28):
    a = cp.random.rand(n, dtype=cp.float32); b = cp.empty_like(a); b[...] = a
    assert bool((a == b).all()), f'a copy of {n} float32 differs'
print('copy check ok')" 2>&1 | tail -1 | tee $OUT/copy_check.txt
grep -q "copy check ok" $OUT/copy_check.txt || { echo "this GPU corrupts copies: nothing else run"; exit 0; }
if [ -n "${REQUIRE_H200:-}" ] && ! grep -q H200 $OUT/device.txt; then echo "not an H200: nothing recorded"; exit 0; fi
timeout $(( ${BUDGET:-500} - ($(date +%s) - T0) )) python3 -m labkit nb run-all --record > $OUT/nb_all.log 2>&1
echo "rc=$? at $(( $(date +%s) - T0 )) s" >> $OUT/nb_all.log
grep -E "ok|FAIL|rc=|rror" $OUT/nb_all.log | cut -c1-220 | tail -20
find data/runs -newer /tmp/start -type f | tar czf $OUT/nb_record.tgz -T -
left=$(( ${BUDGET:-500} - ($(date +%s) - T0) ))
if [ -n "${BENCH:-}" ] && [ $left -gt 90 ]; then  # the decode sweep with its peers, in the time left
  timeout $left python3 -m labkit decode bench --peers --out $OUT/decode_sweep.json > $OUT/decode_sweep.log 2>&1
  echo "decode bench rc=$? at $(( $(date +%s) - T0 )) s"; tail -40 $OUT/decode_sweep.log | cut -c1-200
fi
echo "elapsed $(( $(date +%s) - T0 )) s"
