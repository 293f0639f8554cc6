# bash .dbg/s72/gpu2.sh <full sha>; carry .whl_nbl .whl_ncu .dbg/s72. Second call: the decode GPU tests (as many as
# 400 s allow; the ids of those that ran are in the log), then the ncu tests and notebook 05 live.
T0=$(date +%s); touch /tmp/mark72b
R=/tmp/res72b; rm -rf $R; mkdir -p $R; trap 'cd /work 2>/dev/null; cp $R/* $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nbl/*.whl .whl_ncu/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,clocks.sm,clocks.mem --format=csv,noheader | tee $R/device.txt
el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
el ncu tests; timeout 90 python3 -m pytest -q -rs -p no:cacheprovider -m gpu tests/gpu/test_ncu_gpu.py > $R/ncu_tests.log 2>&1; echo "rc $?"; tail -n 6 $R/ncu_tests.log
el nb05; timeout 120 python3 -m labkit nb run 05 --record > $R/nb05.log 2>&1; echo "rc $?"; tail -n 8 $R/nb05.log
el decode tests; timeout $(( 545 - ($(date +%s) - T0) )) python3 -m pytest -v -rs -p no:cacheprovider -m gpu tests/gpu/test_decode_gpu.py > $R/decode_tests.log 2>&1; echo "pytest rc $?"
grep -c PASSED $R/decode_tests.log; grep -E "FAILED|ERROR" $R/decode_tests.log | head -20; tail -n 15 $R/decode_tests.log
tar czf $R/results.tgz $(find data/runs -mindepth 1 -maxdepth 1 -newer /tmp/mark72b) runs 2>/dev/null
el done; ls -la $R
