# bash .dbg/s72/gpu3.sh <sha>; carry .whl_nbl .whl_ncu .dbg/s72: the decode tests gpu2.sh's time cut off, then notebook 05
T0=$(date +%s); touch /tmp/m3; R=/tmp/res72c; rm -rf $R; mkdir -p $R; trap 'cd /work 2>/dev/null; cp $R/* $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nbl/*.whl .whl_ncu/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
python3 -m pytest -q --collect-only -m gpu tests/gpu/test_decode_gpu.py 2>/dev/null | grep '::' > $R/ids_all.txt
awk 'f{print} /test_persistent_ctas_walk_many_short_units\[128-3\]/{f=1}' $R/ids_all.txt > $R/ids_rest.txt; wc -l $R/ids_all.txt $R/ids_rest.txt
timeout 330 python3 -m pytest -v -rs -p no:cacheprovider -m gpu $(cat $R/ids_rest.txt) > $R/decode_rest.log 2>&1; echo "pytest rc $?"; tail -n 6 $R/decode_rest.log
echo "[$(( $(date +%s) - T0 )) s] nb05"; timeout $(( 560 - ($(date +%s) - T0) )) python3 -m labkit nb run 05 --record > $R/nb05.log 2>&1; echo "rc $?"; tail -n 8 $R/nb05.log
tar czf $R/results.tgz $(find data/runs -mindepth 1 -maxdepth 1 -newer /tmp/m3) 2>/dev/null; echo "[$(( $(date +%s) - T0 )) s] done"
