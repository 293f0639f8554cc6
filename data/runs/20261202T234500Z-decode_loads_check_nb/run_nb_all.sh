# As run on the device from the repository root (bash .dbg/fin4/run_nb_all.sh <full sha>): the decode kernel's GPU
# tests of the loads (tensor-core builds, page ids ahead, wide boxes, the batch-1 clusters, the plain kernel: all
# against exact attention), then notebooks live with --record, after load_box4, in two calls: the tests and 05, 01, 00 (carry .whl_min, .whl_ncu), then NBS="03 04 02" (carry .whl_min, .whl_peers).
T0=$(date +%s)
R=/tmp/resn; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resn -czf $OUT/res.tgz . ; cp /tmp/resn/*.log /tmp/resn/*.csv $OUT/ 2>/dev/null; true' EXIT
touch /tmp/markern; sleep 1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl $(ls .whl_ncu/*.whl .whl_peers/*.whl 2>/dev/null) 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
if [ -z "${NBS:-}" ]; then
  s=$(date +%s); timeout 150 python3 -m pytest -q -m gpu tests/gpu/test_decode_gpu.py -k "tensor_core_builds or page_prefetch or wide_boxes or clusters_of_8_at_batch_1_match or decode_matches" -p no:cacheprovider -rs > $R/gpu_tests.log 2>&1 || echo "pytest rc $?"; echo "pytest $(( $(date +%s) - s )) s"; tail -2 $R/gpu_tests.log
fi
for nb in ${NBS:-05 01 00}; do
  left=$(( 560 - ($(date +%s) - T0) ))
  [ $left -lt 40 ] && { echo "no time left for $nb"; break; }
  s=$(date +%s); LABKIT_OUT=$R/nb timeout $left python3 -m labkit nb run $nb --record > $R/run_$nb.log 2>&1 || echo "$nb rc $?"; echo "$nb $(( $(date +%s) - s )) s (limit $left)"; tail -1 $R/run_$nb.log | cut -c1-200
done
mkdir -p $R/rec; for d in data/runs/*; do [ -f $d/run.json ] && [ $d -nt /tmp/markern ] && cp -r $d $R/rec/; done; ls $R/rec | tail -8
