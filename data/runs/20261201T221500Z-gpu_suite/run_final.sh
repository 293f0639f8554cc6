# As run on the device from the repository root (bash .dbg/run_final.sh <full sha>): the whole GPU suite, then the
# user's path through a labkit-built decode manifest (build, check, run) and a few refusals, as printed.
R=/tmp/res; mkdir -p $R; trap 'cp /tmp/res/* $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl .whl_ncu/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
{
  set -x
  python3 -m labkit decode build --batch 8 --kv-len 4096 --out /tmp/m
  python3 -m labkit manifest check /tmp/m/decode_b8_*.json --cubin-dir /tmp/m | tail -3
  python3 -m labkit manifest run /tmp/m/decode_b8_*.json --cubin-dir /tmp/m --iters 20
  python3 -m labkit decode from-manifest data/trtllm_gen_decode_manifest_v4.json --out /tmp/s | tail -2
  python3 -m labkit manifest run /tmp/s/decode_*.json --cubin-dir /tmp/s --iters 20
  python3 -m labkit manifest run data/trtllm_gen_decode_manifest_v4.json --var tokens=2
  python3 -m labkit nb run 03 --record -p source bogus
  python3 -m labkit device | head -4
  set +x
} > $R/user_path.log 2>&1; cat $R/user_path.log | cut -c1-220
s=$(date +%s); timeout 420 python3 -m pytest -q -m gpu tests/gpu > $R/gpu_tests.log 2>&1 || echo "pytest rc $?"; echo "pytest $(( $(date +%s) - s )) s"; tail -8 $R/gpu_tests.log
