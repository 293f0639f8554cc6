#!/usr/bin/env bash
# bash .dbg/s86/nb3.sh <full sha>, carry .whl-nb and .dbg/s86 (the notebook wheels and nvtx; no FA3: the carry
# limit): every notebook live with its defaults (labkit nb run-all), recorded (--record) only on an H200.
T0=$(date +%s)
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-nb/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
NCUPY=$(find /usr/local/cuda*/ /opt/nvidia -name ncu_report.py 2>/dev/null | head -1)
if ! python3 -c "import ncu_report" 2>/dev/null && [ -n "$NCUPY" ]; then export PYTHONPATH=$PYTHONPATH:$(dirname $NCUPY); fi
{ nvidia-smi --query-gpu=name,uuid,driver_version,vbios_version,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw,power.limit --format=csv
  nvidia-smi -q | grep -E "Board Part" | head -1; } > $OUT/device_all.txt 2>&1; cat $OUT/device_all.txt
REC=""; grep -q "H200" $OUT/device_all.txt && REC="--record"
echo "record: ${REC:-no (not an H200)}" | tee $OUT/all_summary.txt
export LABKIT_OUT=/tmp/nbruns
ls -d data/runs/* > /tmp/before.txt
timeout 520 python3 -m labkit nb run-all $REC > $OUT/run_all.log 2>&1; echo "run-all rc=$? at $(( $(date +%s) - T0 )) s" | tee -a $OUT/all_summary.txt
grep -E "^[0-9]{2}_.*: (ok|FAILED)|all notebooks|failed" $OUT/run_all.log | tee -a $OUT/all_summary.txt
ls -d data/runs/* | grep -vxFf /tmp/before.txt > /tmp/new.txt; cat /tmp/new.txt
python3 - <<'PY' > $OUT/all_text.txt
import json, glob
for nb in sorted(glob.glob("/tmp/nbruns/2*/*.ipynb")):
    print("=====", nb)
    for c in json.load(open(nb))["cells"]:
        for o in c.get("outputs", []):
            t = "".join(o.get("text", "")) or "".join(o.get("data", {}).get("text/plain", ""))
            if t.strip():
                print(t[:5000])
PY
grep -c "Traceback\|triton_heuristics" $OUT/all_text.txt | sed 's/^/tracebacks or inductor logs in the notebooks: /' | tee -a $OUT/all_summary.txt
mkdir -p /tmp/figs && for d in /tmp/nbruns/2*; do for f in $d/figs/*.png; do cp $f /tmp/figs/$(basename $d | cut -d- -f2-)_$(basename $f); done; done
tar -C /tmp --exclude='*.svg' --exclude='*.ncu-rep' -czf $OUT/figs_all.tgz figs
[ -s /tmp/new.txt ] && tar -czf $OUT/records_all.tgz $(cat /tmp/new.txt)
ls -la $OUT; echo "elapsed $(( $(date +%s) - T0 )) s"
