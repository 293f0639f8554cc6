#!/usr/bin/env bash
# bash .dbg/s80/call1.sh <full sha> WHEELDIR "NOTEBOOKS" TESTS...: the smem probe, the GPU test files named, then the
# notebooks named live and recorded; every log and the new records come back under $OUT.
T0=$(date +%s); touch /tmp/start
sha=$1 wheels=$2 nbs=$3; shift 3
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site $wheels/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache
export LABKIT_GIT_SHA=$sha LABKIT_NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
left() { echo $(( 580 - ($(date +%s) - T0) )); }
{ nvidia-smi --query-gpu=name,uuid,driver_version,vbios_version,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw --format=csv
  nvidia-smi -q | grep -E "Board Part" | head -1; python3 -m labkit device; } > $OUT/device.txt 2>&1
head -4 $OUT/device.txt
[ -f /tmp/smem_done ] || { timeout 90 python3 .dbg/s80/smem_probe.py $OUT/smem_probe.json > $OUT/smem_probe.log 2>&1; echo "smem probe rc=$?"; touch /tmp/smem_done; cut -c1-400 $OUT/smem_probe.log; }
for t in "$@"; do
  [ $(left) -gt 60 ] || { echo "$t: not run (time)" | tee -a $OUT/summary.txt; continue; }
  n=$(basename $t .py)
  timeout $(( $(left) - 40 )) python3 -m pytest -q -rs -p no:cacheprovider -m gpu $t > $OUT/$n.log 2>&1
  echo "$n rc=$? $(tail -1 $OUT/$n.log) at $(( $(date +%s) - T0 )) s" | tee -a $OUT/summary.txt
  grep -E "^(FAILED|ERROR|SKIPPED)" $OUT/$n.log | head -8 | cut -c1-300
done
rec=--record; grep -q H200 $OUT/device.txt || { rec=; echo "not an H200: notebooks run live, not recorded"; }
for nb in $nbs; do
  [ $(left) -gt 30 ] || { echo "nb $nb: not run (time)" | tee -a $OUT/summary.txt; continue; }
  timeout $(( $(left) - 15 )) python3 -m labkit nb run $nb $rec > $OUT/nb_$nb.log 2>&1
  echo "nb $nb rc=$? at $(( $(date +%s) - T0 )) s" | tee -a $OUT/summary.txt; tail -3 $OUT/nb_$nb.log | cut -c1-300
done
tar czf $OUT/records.tgz $(find data/runs runs -mindepth 1 -maxdepth 1 -newer /tmp/start 2>/dev/null) 2>/dev/null
echo "elapsed $(( $(date +%s) - T0 )) s"
