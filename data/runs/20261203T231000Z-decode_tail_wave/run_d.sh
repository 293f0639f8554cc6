# bash .dbg/s58/run_d.sh <full sha>; carry .whl_nb, .dbg/s58/run_d.sh: the sched and timing GPU files (not reached by
# run_c.sh), and the CTA model beside one instrumented call of a planned tail (76 x 2k: 80 units in 3 splits)
T0=$(date +%s); R=/tmp/resd; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resd -czf $OUT/res.tgz . ; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nb/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv > $R/smi.csv; cat $R/smi.csv
timeout 60 python3 -c "
import json; from labkit.sched import measure as sched
p = sched.decode_point(76, 2048, None, launches=1)
print(json.dumps({k: p[k] for k in ('kernel', 'ctas', 'waves', 'wave_efficiency', 'efficiency', 'measured_slot_efficiency', 'measured_efficiency', 'measured_waves', 'makespan_us')}))
" 2>&1 | tee $R/tail_timeline.json | tail -3
timeout 110 python3 -m pytest -q -p no:cacheprovider -rs -m gpu tests/gpu/test_sched_gpu.py tests/gpu/test_timing_gpu.py > $R/gpu_rest.log 2>&1 || echo "rest rc $?"
tail -1 $R/gpu_rest.log; grep -E "^(FAILED|ERROR)" $R/gpu_rest.log | head; echo "elapsed $(( $(date +%s) - T0 )) s"
