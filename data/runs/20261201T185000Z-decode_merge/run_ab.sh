# As run on the device, from the repository root at e44ed70 with the merge in the working tree (committed as 435fa53):
# the harness at .dbg/dec/dec_merge.py, head2/ = the kernels at e44ed70, mrel/ = the merge plus
# ../20261201T183900Z-decode_split_counter/count_in.diff, tail/ and tailm/ = head2 and the merge with tail_stamps.diff,
# .dbg/dec/tail_run2.py = tail_run.py here; .whl_min = the notebook wheels less ncu_report, jedi and debugpy.
set -e
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv | tee $OUT/gpu.txt
timeout 270 python3 .dbg/dec/dec_merge.py > $OUT/dec_merge.out 2>&1 || echo "dec_merge rc $?"
tail -26 $OUT/dec_merge.out
for t in tail tailm; do TAIL_DIR=$t timeout 60 python3 .dbg/dec/tail_run2.py 2>&1 | tail -1; done
s=$(date +%s); timeout 200 python3 -m pytest -q -m gpu tests/gpu/test_decode_gpu.py > $OUT/gpu_tests_decode.log 2>&1 || echo "pytest rc $?"; echo "pytest $(( $(date +%s) - s )) s"; tail -4 $OUT/gpu_tests_decode.log
# The three-round acq_rel A/B (ab_mrel.*), at 435fa53 (the merge committed), mrel/ as above:
#   SKIP_CHECKS=1 timeout 250 python3 .dbg/dec/dec_mrel.py   (dec_ab_mrel.py here; .whl_min only)
