# bash .dbg/s62/run_i.sh <full sha, given literally>; carry .whl_nbl, .whl_ncu, .dbg/s62: the ncu GPU file (its cases
# time with a setup, now run inside the pad), with the ncu-report wheel that run_h.sh did not carry
T0=$(date +%s)
R=/tmp/resi; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resi -czf $OUT/res.tgz . ; cp /tmp/resi/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nbl/*.whl .whl_ncu/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
timeout 330 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_ncu_gpu.py > $R/gpu_ncu.log 2>&1 || echo "rc $?" | tee -a $R/summary.txt
tail -1 $R/gpu_ncu.log | tee -a $R/summary.txt; grep -E "^(FAILED|ERROR)" $R/gpu_ncu.log | head | tee -a $R/summary.txt
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $R/summary.txt
