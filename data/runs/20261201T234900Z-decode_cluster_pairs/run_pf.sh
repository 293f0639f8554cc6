# As run on the device from the repository root (bash .dbg/run_pf.sh <full sha>); .whl_min = the notebook wheels
# less jedi and debugpy, plus jupytext and its needs. One tarball comes back.
R=/tmp/res; mkdir -p $R; trap 'tar -C /tmp/res -czf $OUT/res.tgz . ; cp /tmp/res/*.log $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1 R
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
s=$(date +%s); timeout 120 python3 -m pytest -q -m gpu tests/gpu/test_decode_gpu.py -k "cluster" > $R/gpu_tests.log 2>&1 || echo "pytest rc $?"; echo "pytest $(( $(date +%s) - s )) s"; tail -15 $R/gpu_tests.log
s=$(date +%s); timeout 250 python3 .dbg/pf/ab_cl.py > $R/ab.log 2>&1 || echo "ab rc $?"; echo "ab $(( $(date +%s) - s )) s"; cut -c1-300 $R/ab.log
s=$(date +%s); timeout 150 ncu --nvtx --nvtx-include "regex:cudnn_.*/" --section LaunchStats --section Occupancy --section SpeedOfLight --cache-control all --clock-control none python3 .dbg/pf/cudnn_cfg.py > $R/cudnn_ncu.log 2>&1 || echo "ncu rc $?"; echo "ncu $(( $(date +%s) - s )) s"; grep -E "cudnn_|Grid Size|Block Size|Registers Per|Dynamic Shared|Static Shared|Duration|DRAM Throughput|Waves Per SM|Achieved Occupancy" $R/cudnn_ncu.log | cut -c1-160 | head -90
