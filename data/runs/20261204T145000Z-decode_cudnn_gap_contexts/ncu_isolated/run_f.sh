# bash .dbg/s61/run_f.sh <full sha, given literally>; carry .whl_nb, .dbg/s61: a diagnosis, no change: ncu on labkit's
# plan and cuDNN (torch SDPA) at 16 x 4k, 32 x 2k, 17 x 4k and 16 x 8k d128 (the calls furthest behind cuDNN), cache
# control all: DRAM bytes read and written, DRAM and L2 throughput, duration, launch and occupancy, kernel by kernel
T0=$(date +%s)
R=/tmp/resf; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resf -czf $OUT/res.tgz . ; cp /tmp/resf/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nb/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sector_hit_rate.pct,lts__t_sectors_op_read.sum,sm__cycles_active.avg,smsp__inst_executed.sum,launch__grid_size,launch__registers_per_thread,launch__occupancy_limit_shared_mem,sm__warps_active.avg.pct_of_peak_sustained_active
timeout 400 ncu --nvtx --nvtx-include "regex:(labkit|cudnn)_.*/" --kernel-name "regex:paged_decode|cudnn_generated|lean_reduction" --metrics $M --cache-control all --clock-control none python3 .dbg/s61/ncu_cmp.py > $R/ncu.log 2>&1 || echo "ncu rc $?"
grep -E "^  [a-z_]+.*\(|<0,|gpu__time|dram__bytes|dram__throughput|lts__t_sector_hit|lts__t_sectors_op|sm__cycles|smsp__inst|launch__grid|launch__reg|sm__warps|^labkit|^cudnn|rc " $R/ncu.log | cut -c1-160 | tee $R/summary.txt
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $R/summary.txt
