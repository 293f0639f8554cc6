# As run on the device from the repository root (bash .dbg/run_c.sh <full sha>): the new GPU test of the CTA-scheduling
# point at 8 x 8k d128 with the cluster tests, the split sweep at the two batch-8 d128 points, then notebook 04 live.
R=/tmp/res; mkdir -p $R; trap 'tar -C /tmp/res -czf $OUT/res.tgz . ; cp /tmp/res/*.log $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1 R
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
s=$(date +%s); timeout 90 python3 -m pytest -q -m gpu tests/gpu/test_decode_gpu.py -k "cta_scheduling_point or timeline_records or cluster_split" > $R/gpu_tests.log 2>&1 || echo "pytest rc $?"; echo "pytest $(( $(date +%s) - s )) s"; tail -4 $R/gpu_tests.log; cp $R/gpu_tests.log $OUT/
s=$(date +%s); timeout 100 python3 .dbg/pf/split_b8.py > $R/split_b8.log 2>&1 || echo "split rc $?"; echo "split $(( $(date +%s) - s )) s"; cat $R/split_b8.log; cp $R/split_b8.log $OUT/
s=$(date +%s); LABKIT_OUT=$R/nb timeout 170 python3 -m labkit nb run 04 --record > $R/nb04.log 2>&1 || echo "nb04 rc $?"; echo "nb04 $(( $(date +%s) - s )) s"; tail -3 $R/nb04.log
mkdir -p $R/rec; for d in data/runs/*; do [ -f $d/run.json ] && [ $d -nt .dbg/run_c.sh ] && cp -r $d $R/rec/; done; ls $R/rec
