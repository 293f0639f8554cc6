#!/usr/bin/env bash
# bash .dbg/s88/nb_all.sh <full sha>, carry .whl-all3 (einops, nvtx and the notebook wheels but jedi, parso and
# debugpy, and FA3 0.0.3's wheel contents as an xz tarball: 9 MB where its wheel is 28, so all fit the carry limit
# beside the tree) and .dbg/s88: a copy check, then every notebook live with its
# defaults, FA3 among notebook 03's peers (labkit nb run-all), recorded (--record) only on an H200; then the manifest
# GPU tests with the time left.
T0=$(date +%s)
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-all3/*.whl 2>&1 | tail -2
python3 -c "import tarfile; tarfile.open('.whl-all3/fa3.tar.xz').extractall('/tmp/site')"
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
NCUPY=$(find /usr/local/cuda*/ /opt/nvidia -name ncu_report.py 2>/dev/null | head -1)
if ! python3 -c "import ncu_report" 2>/dev/null && [ -n "$NCUPY" ]; then export PYTHONPATH=$PYTHONPATH:$(dirname $NCUPY); fi
{ nvidia-smi --query-gpu=name,uuid,driver_version,vbios_version,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw,power.limit --format=csv
  nvidia-smi -q | grep -E "Board Part" | head -1; } > $OUT/device_all.txt 2>&1; cat $OUT/device_all.txt
python3 -c "
import cupy as cp
for n in (1 << 20, 1 << 28):
    a = cp.random.rand(n, dtype=cp.float32); b = cp.empty_like(a); b[...] = a
    assert bool((a == b).all()), f'a copy of {n} float32 differs'
print('copy check ok')" 2>&1 | tail -1 | tee $OUT/copy_check.txt
grep -q "copy check ok" $OUT/copy_check.txt || { echo "this GPU corrupts copies: nothing else run"; exit 0; }
python3 -c "import papermill, nvtx, fa3_fwd_interface; print('papermill', papermill.__version__, 'nvtx, fa3 ok')" 2>&1 | tail -1 | tee $OUT/imports.txt
REC=""; grep -q "H200" $OUT/device_all.txt && REC="--record"
echo "record: ${REC:-no (not an H200)}" | tee $OUT/all_summary.txt
export LABKIT_OUT=/tmp/nbruns
ls -d data/runs/* > /tmp/before.txt
timeout 420 python3 -m labkit nb run-all $REC > $OUT/run_all.log 2>&1; echo "run-all rc=$? at $(( $(date +%s) - T0 )) s" | tee -a $OUT/all_summary.txt
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
                print(t[:6000])
PY
grep -c "Traceback\|triton_heuristics" $OUT/all_text.txt | sed 's/^/tracebacks or inductor logs in the notebooks: /' | tee -a $OUT/all_summary.txt
mkdir -p /tmp/figs && for d in /tmp/nbruns/2*; do for f in $d/figs/*.png; do cp $f /tmp/figs/$(basename $d | cut -d- -f2-)_$(basename $f); done; done
tar -C /tmp --exclude='*.svg' --exclude='*.ncu-rep' -czf $OUT/figs_all.tgz figs
[ -s /tmp/new.txt ] && tar -czf $OUT/records_all.tgz $(cat /tmp/new.txt)
LEFT=$(( ${MANIFEST_BY:-570} - ($(date +%s) - T0) ))
if [ $LEFT -gt 40 ]; then
  timeout $(( LEFT - 10 )) python3 -m pytest -q -rs -p no:cacheprovider -m gpu tests/gpu/test_manifest_gpu.py > $OUT/manifest_gpu.log 2>&1
  echo "test_manifest_gpu rc=$? $(tail -1 $OUT/manifest_gpu.log | cut -c1-160) at $(( $(date +%s) - T0 )) s" | tee -a $OUT/all_summary.txt
else echo "test_manifest_gpu: not run (time)" | tee -a $OUT/all_summary.txt; fi
ls -la $OUT; echo "elapsed $(( $(date +%s) - T0 )) s"
