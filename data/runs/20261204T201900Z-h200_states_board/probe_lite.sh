# bash .dbg/s67/probe_lite.sh <full sha>; carry .whl_nbl, .dbg/s66, .dbg/s67: the board part number and the state
# probe (1 GiB copy x3, plain reads of 2.15 and 8.6 GB) of whichever H200 this is
R=/tmp/resp; rm -rf $R; mkdir -p $R; trap 'cp /tmp/resp/* $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nbl/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1 R
nvidia-smi -q > $R/nvidia_smi_q.txt 2>&1; grep -E "GPU UUID|VBIOS|Board Part|Module Id|Image Version" $R/nvidia_smi_q.txt
python3 -m labkit device --json > $R/device.json; grep -E "uuid|board" $R/device.json
timeout 100 python3 .dbg/s66/state_probe.py a > $R/state_a.log 2>&1 || echo "state rc $?"; cat $R/state_a.log
timeout 60 python3 -m pytest -q -p no:cacheprovider -m gpu tests/gpu/test_timing_gpu.py -k device_description 2>&1 | tail -1 | tee $R/gpu_test.log
