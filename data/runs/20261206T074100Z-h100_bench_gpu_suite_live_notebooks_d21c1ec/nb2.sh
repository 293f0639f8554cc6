#!/usr/bin/env bash
# bash .dbg/s85/nb2.sh <full sha>, carry .whl-all (FA3, einops, nvtx and the notebook wheels but jedi, parso and
# debugpy, to fit the carry limit) and .dbg/s85. Notebooks 03 and 04 live with their default parameters, FA3 among the
# peers; recorded (--record) and the decode bench run only on an H200, where the issue's numbers are set.
T0=$(date +%s)
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-all/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
{ nvidia-smi --query-gpu=name,uuid,driver_version,vbios_version,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw,power.limit --format=csv
  nvidia-smi -q | grep -E "Board Part" | head -1; } > $OUT/device_nb.txt 2>&1; cat $OUT/device_nb.txt
python3 -c "import papermill, fa3_fwd_interface; print('papermill', papermill.__version__, 'fa3 ok')" 2>&1 | tail -1
REC=""; grep -q "H200" $OUT/device_nb.txt && REC="--record"
echo "record: ${REC:-no (not an H200)}" | tee $OUT/nb_summary.txt
if [ -n "$REC" ]; then
  python3 -m labkit device --json > $OUT/device.json 2>&1
  timeout 150 python3 -m labkit decode bench --peers --sweep-splits --out $OUT/sweep.json > $OUT/sweep.log 2>&1
  echo "bench rc=$? at $(( $(date +%s) - T0 )) s" | tee -a $OUT/nb_summary.txt
  [ -f $OUT/sweep.json ] && python3 -m labkit report show $OUT/sweep.json > $OUT/show.txt 2>&1
fi
export LABKIT_OUT=/tmp/nbruns
ls -d data/runs/* > /tmp/before.txt
timeout 150 python3 -m labkit nb run 03 $REC -p source live > $OUT/nb03.log 2>&1; echo "nb03 rc=$? at $(( $(date +%s) - T0 )) s" | tee -a $OUT/nb_summary.txt
timeout 120 python3 -m labkit nb run 04 $REC -p source live > $OUT/nb04.log 2>&1; echo "nb04 rc=$? at $(( $(date +%s) - T0 )) s" | tee -a $OUT/nb_summary.txt
tail -n 5 $OUT/nb03.log $OUT/nb04.log | cut -c1-250
ls -d data/runs/* | grep -vxFf /tmp/before.txt > /tmp/new.txt; cat /tmp/new.txt
python3 - <<'PY' > $OUT/nb_text.txt
import json, glob
for nb in sorted(glob.glob("/tmp/nbruns/2*/*.ipynb")):
    print("=====", nb)
    for c in json.load(open(nb))["cells"]:
        for o in c.get("outputs", []):
            t = "".join(o.get("text", "")) or "".join(o.get("data", {}).get("text/plain", ""))
            if t.strip():
                print(t[:6000])
PY
grep -c "triton_heuristics\|Triton compilation failed" $OUT/nb_text.txt | sed 's/^/inductor log lines in the notebooks: /' | tee -a $OUT/nb_summary.txt
mkdir -p /tmp/figs && for d in /tmp/nbruns/2*; do for f in $d/figs/*.png; do cp $f /tmp/figs/$(basename $d | cut -d- -f2-)_$(basename $f); done; done
tar -C /tmp --exclude='*.svg' -czf $OUT/figs.tgz figs nbruns
[ -s /tmp/new.txt ] && tar -czf $OUT/records.tgz $(cat /tmp/new.txt)
tar -C $OUT -czf /tmp/logs.tgz $(cd $OUT && ls *.log 2>/dev/null) && rm -f $OUT/*.log && mv /tmp/logs.tgz $OUT/nb_logs.tgz
ls -la $OUT; echo "elapsed $(( $(date +%s) - T0 )) s"
