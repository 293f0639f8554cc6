#!/usr/bin/env bash
# bash .dbg/s86/final.sh <full sha>, carry .whl-all (FA3, einops and the notebook wheels but jedi, parso, debugpy and
# nvtx) and .dbg/s86: the manifest and decode GPU test files at the final commit (the manifest rules changed after the
# full suite ran), then notebook 03 live with FA3 among its peers, recorded (--record) only on an H200.
T0=$(date +%s)
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-all/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
{ nvidia-smi --query-gpu=name,uuid,driver_version,vbios_version,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw,power.limit --format=csv
  nvidia-smi -q | grep -E "Board Part" | head -1; } > $OUT/device_final.txt 2>&1; cat $OUT/device_final.txt
for t in test_manifest_gpu test_decode_gpu; do
  timeout 420 python3 -m pytest -q -rs -p no:cacheprovider -m gpu tests/gpu/$t.py > $OUT/$t.log 2>&1
  echo "$t rc=$? $(tail -1 $OUT/$t.log | cut -c1-160) at $(( $(date +%s) - T0 )) s" | tee -a $OUT/final_summary.txt
  grep -E "^(FAILED|ERROR)" $OUT/$t.log | head -8 | cut -c1-400
done
REC=""; grep -q "H200" $OUT/device_final.txt && REC="--record"
echo "record: ${REC:-no (not an H200)}" | tee -a $OUT/final_summary.txt
export LABKIT_OUT=/tmp/nbruns
ls -d data/runs/* > /tmp/before.txt
timeout 150 python3 -m labkit nb run 03 $REC > $OUT/nb03.log 2>&1; echo "nb03 rc=$? at $(( $(date +%s) - T0 )) s" | tee -a $OUT/final_summary.txt
tail -n 4 $OUT/nb03.log | cut -c1-250
ls -d data/runs/* | grep -vxFf /tmp/before.txt > /tmp/new.txt; cat /tmp/new.txt
python3 - <<'PY' > $OUT/nb03_text.txt
import json, glob
for nb in sorted(glob.glob("/tmp/nbruns/2*/*.ipynb")):
    print("=====", nb)
    for c in json.load(open(nb))["cells"]:
        for o in c.get("outputs", []):
            t = "".join(o.get("text", "")) or "".join(o.get("data", {}).get("text/plain", ""))
            if t.strip():
                print(t[:6000])
PY
grep -c "Traceback\|triton_heuristics" $OUT/nb03_text.txt | sed 's/^/tracebacks or inductor logs: /' | tee -a $OUT/final_summary.txt
[ -s /tmp/new.txt ] && tar -czf $OUT/records03.tgz $(cat /tmp/new.txt)
mkdir -p /tmp/figs && for d in /tmp/nbruns/2*; do for f in $d/figs/*.png; do cp $f /tmp/figs/$(basename $d | cut -d- -f2-)_$(basename $f); done; done
tar -C /tmp --exclude='*.svg' -czf $OUT/figs03.tgz figs
tar -C $OUT -czf /tmp/logs.tgz $(cd $OUT && ls *.log) && rm -f $OUT/*.log && mv /tmp/logs.tgz $OUT/final_logs.tgz
echo "elapsed $(( $(date +%s) - T0 )) s"
