#!/usr/bin/env bash
# bash .dbg/s85/nb.sh <full sha>, carry .whl-nb and .dbg/s85 (FA3 from .site/ if call.sh ran on this machine):
# the decode GPU tests call.sh did not reach, then notebooks 03 and 04 live with their default parameters, recorded
# (--record); the records, the executed notebooks' text and the figures come back.
T0=$(date +%s)
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-nb/*.whl 2>&1 | tail -2
export PYTHONPATH=$PWD/.site:/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid --format=csv,noheader | tee $OUT/device_nb.txt
ls .site 2>&1 | head -3
if [ "${REST:-1}" = 1 ]; then
  timeout ${REST_S:-280} python3 .dbg/s85/rest.py > $OUT/test_decode_gpu_rest.log 2>&1; echo "rest rc=$? at $(( $(date +%s) - T0 )) s" | tee $OUT/nb_summary.txt
  grep -E ' (FAILED|ERROR)' $OUT/test_decode_gpu_rest.log | cut -c1-200; tail -1 $OUT/test_decode_gpu_rest.log | tee -a $OUT/nb_summary.txt
fi
export LABKIT_OUT=/tmp/nbruns
ls -d data/runs/* > /tmp/before.txt
timeout 150 python3 -m labkit nb run 03 ${RECORD---record} -p source live > $OUT/nb03.log 2>&1; echo "nb03 rc=$? at $(( $(date +%s) - T0 )) s" | tee -a $OUT/nb_summary.txt
timeout 120 python3 -m labkit nb run 04 ${RECORD---record} -p source live > $OUT/nb04.log 2>&1; echo "nb04 rc=$? at $(( $(date +%s) - T0 )) s" | tee -a $OUT/nb_summary.txt
tail -n 5 $OUT/nb03.log $OUT/nb04.log | cut -c1-250
ls -d data/runs/* | grep -vxFf /tmp/before.txt > /tmp/new.txt; cat /tmp/new.txt
[ -s /tmp/new.txt ] && tar -czf $OUT/records.tgz $(cat /tmp/new.txt)
python3 - <<'PY' > $OUT/nb_text.txt
import json, glob
for nb in sorted(glob.glob("/tmp/nbruns/2*/*.ipynb")):
    print("=====", nb)
    for c in json.load(open(nb))["cells"]:
        for o in c.get("outputs", []):
            t = "".join(o.get("text", "")) or "".join(o.get("data", {}).get("text/plain", ""))
            if t.strip():
                print(t[:4000])
PY
mkdir -p /tmp/figs && for d in /tmp/nbruns/2*; do for f in $d/figs/*.png; do cp $f /tmp/figs/$(basename $d | cut -d- -f2-)_$(basename $f); done; done
tar -C /tmp --exclude='*.svg' -czf $OUT/figs.tgz figs nbruns
tar -C $OUT -czf /tmp/logs.tgz $(cd $OUT && ls *.log 2>/dev/null) && rm -f $OUT/*.log && mv /tmp/logs.tgz $OUT/nb_logs.tgz
ls -la $OUT; echo "elapsed $(( $(date +%s) - T0 )) s"
