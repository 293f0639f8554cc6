#!/usr/bin/env bash
# bash .dbg/s95/try.sh <full sha>, carry .whl-all3, .dbg/s94, .dbg/s95: on an H200 run.sh's phase 1 (the peer map's
# calls behind at a0cd66e with intervals, then the bench sweep); on an H100 the bench beside the peers at batch 12-13
# and 16 x 8k, then ncu at the same calls (ncu12.py), cache control all: grid, duration, DRAM bytes and throughput,
# kernel by kernel; both on one board, so the two contexts compare. One tar comes back.
nvidia-smi --query-gpu=name,uuid --format=csv,noheader
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  BUDGET=560 bash .dbg/s94/run.sh "$1" 1; exit 0
fi
T0=$(date +%s)
R=/tmp/resn; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resn -czf $OUT/ncu.tgz . ; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-all3/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
{ nvidia-smi --query-gpu=name,uuid,driver_version,vbios_version,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw,power.limit --format=csv
  nvidia-smi -q | grep -E "Board Part" | head -1; } > $R/device.txt 2>&1
timeout 120 python3 -m labkit decode bench --peers --iterations 20 --among none --point 12x8k --point 12x16k \
  --point 13x8k --point 16x8k --out $R/bench.json > $R/bench.log 2>&1; echo "bench rc=$?" >> $R/summary_bench.txt
grep -E "^ +(batch|1[236] )" $R/bench.log | cut -c1-240 | tee -a $R/summary_bench.txt
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sector_hit_rate.pct,sm__cycles_active.avg,smsp__inst_executed.sum,launch__grid_size,launch__block_size,launch__registers_per_thread,launch__shared_mem_per_block_dynamic,launch__shared_mem_per_block_static,launch__occupancy_limit_shared_mem,sm__warps_active.avg.pct_of_peak_sustained_active
timeout 300 ncu --nvtx --nvtx-include "regex:(labkit|cudnn)_.*/" --kernel-name "regex:paged_decode|cudnn_generated|lean_reduction" --metrics $M --cache-control all --clock-control none python3 .dbg/s95/ncu12.py > $R/ncu.log 2>&1 || echo "ncu rc $?"
grep -E "^  [a-z_]+.*\(|<0,|gpu__time|dram__bytes|dram__throughput|lts__t_sector_hit|sm__cycles|smsp__inst|launch__|sm__warps|^labkit|^cudnn|rc " $R/ncu.log | cut -c1-160 > $R/summary.txt
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $R/summary.txt
