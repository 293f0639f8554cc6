#!/usr/bin/env bash
# bash .dbg/s97/run.sh <full sha>; carry .whl-all3, .dbg/s94, .dbg/s97. On an H200: .dbg/s94's phase 1 (#10 question 2:
# the peer map's behind calls with intervals, then the bench sweep). Elsewhere: this session's notebook changes live —
# notebook 02 and 04 given only a smaller shape (their tail defaults follow it), notebook 04 refusing a split count
# past its call's pages before anything is measured — then the sweep, sched and timing GPU tests.
nvidia-smi --query-gpu=name,uuid --format=csv,noheader
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  BUDGET=${BUDGET:-560} bash .dbg/s94/run.sh "$1" 1; exit
fi
T0=$(date +%s)
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-all3/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
S=$OUT/summary.txt
{ nvidia-smi --query-gpu=name,uuid,driver_version,vbios_version,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw,power.limit --format=csv
  nvidia-smi -q | grep -E "Board Part" | head -1; } > $OUT/device.txt 2>&1; cat $OUT/device.txt
python3 -c "
import cupy as cp
for n in (1 << 20, 1 << 28):
    a = cp.random.rand(n, dtype=cp.float32); b = cp.empty_like(a); b[...] = a
    assert bool((a == b).all()), f'a copy of {n} float32 differs'
print('copy check ok')" 2>&1 | tail -1 | tee $OUT/copy_check.txt
grep -q "copy check ok" $OUT/copy_check.txt || { echo "this GPU corrupts copies: nothing else run"; exit 0; }
python3 -c "
import importlib.metadata as m, sys
print('python', sys.version.split()[0])
for n in ('cupy-cuda13x', 'cuda-bindings', 'numpy', 'torch', 'papermill', 'nvtx'):
    try: print(n, m.version(n))
    except Exception: print(n, 'absent')" > $OUT/versions.txt 2>&1
export LABKIT_OUT=/tmp/nbruns
nb() {  # name, timeout, args...
  local tag=$1 t=$2; shift 2
  timeout $t python3 -m labkit nb run "$@" > $OUT/nb_$tag.log 2>&1
  echo "nb $tag ($*): rc=$? at $(( $(date +%s) - T0 )) s" | tee -a $S
  grep -vE "^\[" $OUT/nb_$tag.log | head -12 | cut -c1-220 | tee -a $S
}
nb 02_small 170 02 -p shape 1,1024,8,128 -p iterations 3 -p tail_iterations 3 -p precision_iterations 2
nb 04_small 150 04 -p shape 1,1024,8,128 -p launches 1
nb 04_bad_splits 80 04 -p workload decode -p decode_kv_lens 64 -p decode_splits 1,2 -p launches 1
python3 - <<'PY' > $OUT/nb_text.txt
import json, glob
for nb in sorted(glob.glob("/tmp/nbruns/2*/*.ipynb")):
    if nb.endswith(".input.ipynb"):
        continue
    print("=====", nb)
    for c in json.load(open(nb))["cells"]:
        for o in c.get("outputs", []):
            t = "".join(o.get("text", "")) or "".join(o.get("data", {}).get("text/plain", "")) or \
                (o.get("ename", "") + ": " + o.get("evalue", "") if o.get("output_type") == "error" else "")
            if t.strip():
                print(t[:4000])
PY
mkdir -p /tmp/figs && for d in /tmp/nbruns/2*; do for f in $d/figs/*.png; do [ -f "$f" ] && cp $f /tmp/figs/$(basename $d | cut -d- -f2-)_$(basename $f); done; done
tar -C /tmp -czf $OUT/figs.tgz figs
for d in /tmp/nbruns/2*; do cp $d/run.json /tmp/figs/$(basename $d).run.json 2>/dev/null; done
tar -C /tmp -czf $OUT/runs_json.tgz $(cd /tmp && ls -d nbruns/2*/run.json nbruns/2*/data/session.json 2>/dev/null)
LEFT=$(( ${BUDGET:-470} - ($(date +%s) - T0) ))
if [ $LEFT -gt 40 ]; then
  timeout $(( LEFT - 10 )) python3 -m pytest -q -rs -p no:cacheprovider -m gpu tests/gpu/test_sweep_gpu.py tests/gpu/test_sched_gpu.py tests/gpu/test_timing_gpu.py > $OUT/gpu_tests.log 2>&1
  echo "sweep/sched/timing GPU tests rc=$? $(tail -1 $OUT/gpu_tests.log | cut -c1-160) at $(( $(date +%s) - T0 )) s" | tee -a $S
else echo "GPU tests: not run (time)" | tee -a $S; fi
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader >> $OUT/device.txt
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
