#!/usr/bin/env bash
# bash .dbg/s95/run.sh <full sha>, carry .whl-all3 and .dbg/s95. Batch 9-14 (67-118 units, the plan's one 8-warp CTA per
# unit on 96-104 of 132 SMs): the same build in s unclustered splits, s chosen so units x s nearly fills whole waves of
# one CTA per SM, against the plan, labkit decode compare (30 shuffled cold rounds, outputs checked). Everything under
# $OUT is tarred into one file (a count limit on files that come back).
T0=$(date +%s)
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-all3/*.whl 2>&1 | tail -2
python3 -c "import tarfile; tarfile.open('.whl-all3/fa3.tar.xz').extractall('/tmp/site')"
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
left() { echo $(( ${BUDGET:-300} - ($(date +%s) - T0) )); }
R=$OUT/r; mkdir -p $R; S=$R/summary.txt
{ nvidia-smi --query-gpu=name,uuid,driver_version,vbios_version,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw,power.limit --format=csv
  nvidia-smi -q | grep -E "Board Part" | head -1; } > $R/device.txt 2>&1; cat $R/device.txt
python3 -m labkit device --json > $R/device.json 2>&1
cmp() { pt=$1; shift
  [ $(left) -gt 40 ] || { echo "compare $pt: not run (time)" | tee -a $S; return; }
  b=${pt%x*}; n=${pt#*x}; builds=""; for s in "$@"; do builds="$builds --build warps=8,stages=2,splits=$s"; done
  timeout $(( $(left) - 10 )) python3 -m labkit decode compare --batch $b --kv-len $n --iterations 30 $builds \
    --out $R/cmp_$pt.json > $R/cmp_$pt.log 2>&1
  echo "compare $pt rc=$? at $(( $(date +%s) - T0 )) s" | tee -a $S; grep -E "^ +[0-9]+ " $R/cmp_$pt.log | cut -c1-200
}
cmp 12x8192 4 8 11; cmp 12x16384 4 11; cmp 12x32768 4 11; cmp 13x8192 5 10; cmp 11x8192 3 6; cmp 14x4096 7 14
cmp 12x4096 4 11; cmp 9x8192 9 11
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader >> $R/smi.csv
(cd $OUT && tar -czf r.tgz r && rm -rf r)
echo "elapsed $(( $(date +%s) - T0 )) s"
