#!/usr/bin/env bash
# bash .dbg/s99/nvtx2.sh <sha>: labkit's NVTX ranges gated on a tool (NVTX_INJECTION64_PATH): does ncu set it in its
# target, do the ncu GPU tests (which filter on labkit's ranges) still pass, what the timing-overhead table says; on an
# H200, with time left, .dbg/s99/b16.sh. Carry .whl-all3 and .dbg/s99.
T0=$(date +%s)
nvidia-smi --query-gpu=name,uuid --format=csv,noheader; nvidia-smi -q | grep -E "Board Part" | head -1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-all3/nvtx-*.whl 2>&1 | tail -1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
NCUPY=$(find /usr/local/cuda*/ /opt/nvidia -name ncu_report.py 2>/dev/null | head -1); [ -n "$NCUPY" ] && export PYTHONPATH=$PYTHONPATH:$(dirname $NCUPY)
echo "== outside ncu: NVTX_INJECTION64_PATH=${NVTX_INJECTION64_PATH:-unset}"
timeout 60 ncu --target-processes all python3 -c "import os; print('== under ncu: NVTX_INJECTION64_PATH =', os.environ.get('NVTX_INJECTION64_PATH'))" 2>&1 | grep -v "^==PROF==" | tail -3
timeout 40 python3 -c "
from labkit import probes
print(probes.timing_overhead_table(probes.timing_overhead()))" 2>&1 | tail -9
timeout 150 python3 -m pytest -q -rs -p no:cacheprovider -m gpu tests/gpu/test_ncu_gpu.py tests/gpu/test_timing_gpu.py -k "ncu or nvtx or overhead" 2>&1 | tail -4
echo "== at $(( $(date +%s) - T0 )) s"
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 && BUDGET=$(( ${ALL:-200} - ($(date +%s) - T0) )) IT=30 bash .dbg/s99/b16.sh $1 2>&1 | grep -E "^==|plan|warps=" | cut -c1-200
[ -d $OUT/b16 ] && tar -C $OUT -czf /tmp/b16.tgz b16 && rm -rf $OUT/b16 && mv /tmp/b16.tgz $OUT/
echo "elapsed $(( $(date +%s) - T0 )) s"
