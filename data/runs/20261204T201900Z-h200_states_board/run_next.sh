# bash .dbg/s66/run_next.sh <full sha, given literally>; carry .whl_nbl, .dbg/s66. Planned in the session of
# 2026-12-04 19:18 (no device lent then). Part 1: which streaming state this H200 is in (nvidia-smi -q, labkit device
# with the VBIOS, the copy and plain reads twice in two processes, the bench at 64 x 8k and 256 x 8k beside cuDNN).
# Part 2: one_cta_read.py, pure reads of the one-split calls' pages by loader (bulk / cp.async / cp.async from the
# contiguous copy) beside the plan and cuDNN. ~4 min.
T0=$(date +%s)
R=/tmp/resn; rm -rf $R; mkdir -p $R; trap 'cp /tmp/resn/* $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nbl/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1 R
nvidia-smi -q > $R/nvidia_smi_q.txt 2>&1; grep -iE "VBIOS|Part Number|Product|Remapp|ECC Mode|Current  *:|Memory  *:" $R/nvidia_smi_q.txt | head -30
python3 -m labkit device --json > $R/device.json; grep vbios $R/device.json
timeout 60 python3 -m pytest -q -p no:cacheprovider -m gpu tests/gpu/test_timing_gpu.py -k device_description 2>&1 | tail -2
timeout 120 python3 .dbg/s66/state_probe.py a > $R/state_a.log 2>&1 || echo "state a rc $?"; cat $R/state_a.log
timeout 200 python3 -m labkit decode bench --point 64x8192 --point 256x8192 --peers --iterations 20 --out $R/bench_state.json > $R/bench_state.log 2>&1 || echo "bench rc $?"
grep -E "copy|batch|TB/s|^ *(64|256) " $R/bench_state.log | cut -c1-160 | tail -12
timeout 120 python3 .dbg/s66/state_probe.py b > $R/state_b.log 2>&1 || echo "state b rc $?"; cat $R/state_b.log
echo "part 1 done at $(( $(date +%s) - T0 )) s"
timeout 330 python3 .dbg/s66/one_cta_read.py > $R/one_cta_read.log 2>&1 || echo "read rc $?"
grep -E "point|Error|^r[0-9]|elapsed" $R/one_cta_read.log | cut -c1-160 | tail -80
echo "elapsed $(( $(date +%s) - T0 )) s"
