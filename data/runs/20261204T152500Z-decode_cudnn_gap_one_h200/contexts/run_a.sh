# bash .dbg/s62/run_a.sh <full sha, given literally>; carry .whl_nbl, .whl_peers, .dbg/s62: a diagnosis, no change:
# labkit's plan against cuDNN (torch SDPA) at 16 x 4k, 32 x 2k, 17 x 4k and 16 x 8k d128, every context on ONE H200:
# the bench beside the peers (as shipped, and with labkit's PDL off), ncu with its own cache control (clocks as they
# are, and locked to base), ncu after labkit's cold pad with no cache control; nvidia-smi sampled throughout
T0=$(date +%s)
R=/tmp/resa; rm -rf $R; mkdir -p $R; trap 'kill $SMI 2>/dev/null; tar -C /tmp/resa -czf $OUT/res.tgz . ; cp /tmp/resa/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nbl/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv -lms 50 > $R/smi_trace.csv 2>&1 &
SMI=$!
mark() { echo "$(date +%H:%M:%S.%N | cut -c1-12) $1" >> $R/phases.txt; }
pts="--point 16x4096 --point 32x2048 --point 17x4096 --point 16x8192"
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,sm__cycles_active.avg,smsp__inst_executed.sum,sm__cycles_elapsed.avg.per_second
NS="--nvtx --nvtx-include regex:(labkit|cudnn)_.*/ --kernel-name regex:paged_decode|cudnn_generated"
step() {  # name, seconds it may take, command...
  local name=$1 need=$2; shift 2
  local left=$(( 560 - ($(date +%s) - T0) )); [ $left -lt $need ] && { echo "no time left for $name" | tee -a $R/summary.txt; return; }
  mark "start $name"; timeout $left "$@" > $R/$name.log 2>&1 || echo "rc $? at $name" | tee -a $R/summary.txt; mark "end $name"
}
step dirty 45 python3 .dbg/s62/ctx_bench.py dirty -- decode bench --peers $pts --iterations 20 --out $R/dirty.json
step nopdl 45 python3 .dbg/s62/ctx_bench.py nopdl -- decode bench --peers $pts --iterations 20 --out $R/nopdl.json
step ncu_iso 60 ncu $NS --metrics $M --cache-control all --clock-control none python3 .dbg/s62/ncu_ctx.py isolated 3
step ncu_base 60 ncu $NS --metrics $M --cache-control all --clock-control base python3 .dbg/s62/ncu_ctx.py isolated 3
step ncu_pad 60 ncu $NS --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum --cache-control none --clock-control none python3 .dbg/s62/ncu_ctx.py pad 5
step dirty_r2 45 python3 .dbg/s62/ctx_bench.py dirty -- decode bench --peers $pts --iterations 20 --out $R/dirty_r2.json
step nopdl_r2 45 python3 .dbg/s62/ctx_bench.py nopdl -- decode bench --peers $pts --iterations 20 --out $R/nopdl_r2.json
kill $SMI 2>/dev/null
for m in dirty nopdl dirty_r2 nopdl_r2; do { echo "== $m"; grep -E "^ +(batch|[0-9]+) +" $R/$m.log | cut -c1-230; } | tee -a $R/summary.txt; done
python3 .dbg/s62/ncu_sum.py $R/ncu_iso.log $R/ncu_base.log $R/ncu_pad.log | tee -a $R/summary.txt
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $R/summary.txt
