# As run on the device from the repository root at d8d4a4e (bash run_stamps.sh <full sha>): .dbg/dec/stamp = the kernels
# at d8d4a4e plus tail_stamps.diff, .dbg/dec/tail_stamp.py = tail_stamps.py here. The cuobjdump lines found no device
# code in NVRTC's cubins (rc 255) and gave nothing.
set -e
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv | tee $OUT/gpu.txt
CUOBJ=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump | head -1)
for c in .dbg/sass/*.cubin; do $CUOBJ -sass $c > $OUT/$(basename $c .cubin).sass 2>&1 || echo "cuobjdump rc $?"; done
grep -n "ATOMG\|ATOM\.\|MEMBAR\|CCTL\|EXIT\|BAR.SYNC\|LDG" $OUT/b1_8k_d128.sass | tail -60
s=$(date +%s); timeout 150 python3 .dbg/dec/tail_stamp.py > $OUT/tail_stamp.out 2>&1 || echo "tail rc $?"; echo "tail $(( $(date +%s) - s )) s"; cat $OUT/tail_stamp.out | tail -8
