#!/usr/bin/env bash
# bash .dbg/s84/nb.sh <full sha>, carry .whl-nb .dbg/s84 (no FA3: the carry limit): notebooks 03 and 04 live (not recorded) with small
# sweeps, into $OUT/nb; the executed notebooks' text and the figures come back.
T0=$(date +%s)
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-nb/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid --format=csv,noheader | tee $OUT/device_nb.txt
export LABKIT_OUT=/tmp/nbruns
timeout 200 python3 -m labkit nb run 03 -p source live -p batch 64,8 -p kv_lens 8k,1k -p iterations 10 -p splits_at 8,8192 > $OUT/nb03.log 2>&1; echo "nb03 rc=$? at $(( $(date +%s) - T0 )) s" | tee -a $OUT/nb_summary.txt
timeout 200 python3 -m labkit nb run 04 -p source live -p workload decode -p decode_batches 1,16,64 -p decode_splits 1,4 -p launches 2 > $OUT/nb04.log 2>&1; echo "nb04 rc=$? at $(( $(date +%s) - T0 )) s" | tee -a $OUT/nb_summary.txt
tail -n 4 $OUT/nb03.log $OUT/nb04.log | cut -c1-250
python3 - <<'PY' > $OUT/nb_text.txt
import json, glob
for nb in sorted(glob.glob("/tmp/nbruns/*/*.ipynb")):
    print("=====", nb)
    for c in json.load(open(nb))["cells"]:
        for o in c.get("outputs", []):
            t = "".join(o.get("text", "")) or "".join(o.get("data", {}).get("text/plain", ""))
            if t.strip():
                print(t[:3000])
PY
mkdir -p $OUT/figs && for d in /tmp/nbruns/2*; do for f in $d/figs/*.png; do cp $f $OUT/figs/$(basename $d | cut -d- -f2-)_$(basename $f); done; cp $d/data/*.csv $OUT/figs/ 2>/dev/null; done
ls $OUT/figs; echo "elapsed $(( $(date +%s) - T0 )) s"
