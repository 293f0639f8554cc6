# bash .dbg/s72/gpu1.sh <full sha>; carry .whl_nbl .whl_peers .dbg/s72 (all three wheel folders pass 64 MiB: ncu's go with gpu2.sh). First run on whatever GPU comes
# (this session's default kind is an H100): the GPU tests but decode's, make bench (Sage2 + decode with peers, split
# sweeps), then every notebook live.
T0=$(date +%s); touch /tmp/mark72
R=/tmp/res72; rm -rf $R; mkdir -p $R; trap 'cd /work 2>/dev/null; cp $R/* $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nbl/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
{ nvidia-smi --query-gpu=name,uuid,driver_version,vbios_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem,power.limit --format=csv,noheader
  nvidia-smi -q | grep -E "Board Part" | head -1; python3 -m labkit device; } > $R/device.txt 2>&1
cat $R/device.txt
el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
el tests; timeout 150 python3 -m pytest -q -rs -p no:cacheprovider -m gpu tests/gpu/test_manifest_gpu.py tests/gpu/test_sage2_gpu.py tests/gpu/test_sched_gpu.py tests/gpu/test_timing_gpu.py > $R/gpu_tests.log 2>&1; echo "pytest rc $?"; tail -n 12 $R/gpu_tests.log
el bench; timeout 90 python3 -m labkit bench --schedule sm90 --out $R/sage2_bench.json > $R/sage2_bench.log 2>&1; echo "rc $?"; tail -n 22 $R/sage2_bench.log
el decode bench; timeout 130 python3 -m labkit decode bench --peers --sweep-splits --out $R/decode_bench.json > $R/decode_bench.log 2>&1; echo "rc $?"; tail -n 45 $R/decode_bench.log
el notebooks
for nb in 00 01 02 03 04; do
  [ $(( $(date +%s) - T0 )) -gt 470 ] && { el "skip notebook $nb: time"; continue; }
  timeout $(( 540 - ($(date +%s) - T0) )) python3 -m labkit nb run "$nb" --record >> $R/notebooks.log 2>&1; el "notebook $nb rc $?"
done
tail -n 20 $R/notebooks.log
tar czf $R/results.tgz $(find data/runs -mindepth 1 -maxdepth 1 -newer /tmp/mark72) runs 2>/dev/null
el done; ls -la $R
