# bash .dbg/s67/probe.sh <full sha>; carry .whl_nbl, .dbg/s66, .dbg/s67: which streaming state this H200 is in, and its
# nvidia-smi -q to set beside the other state's (VBIOS is the same in both: 96.00.A5.00.1A)
T0=$(date +%s)
R=/tmp/resp; rm -rf $R; mkdir -p $R; trap 'cp /tmp/resp/* $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nbl/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1 R
nvidia-smi -q > $R/nvidia_smi_q.txt 2>&1; grep -E "GPU UUID|VBIOS|Image Version" $R/nvidia_smi_q.txt
sed -n '/Remapped Rows/,/None  /p' $R/nvidia_smi_q.txt | grep -E "Error|Max|High|Partial|Low|None"
python3 -m labkit device --json > $R/device.json
timeout 100 python3 .dbg/s66/state_probe.py a > $R/state_a.log 2>&1 || echo "state rc $?"; cat $R/state_a.log
timeout 150 python3 -m labkit decode bench --point 64x8192 --peers --iterations 20 --among data/runs --out $R/bench_state.json > $R/bench_state.log 2>&1 || echo "bench rc $?"
grep -E "copy|TB/s|^ *64 " $R/bench_state.log | cut -c1-170 | tail -6
echo "elapsed $(( $(date +%s) - T0 )) s"
