# As run on the device (bash .dbg/paging/run_repro.sh [variants]): repro_order.py, each variant in its own process.
export R=/tmp/res; mkdir -p $R; trap 'cp /tmp/res/* $OUT/ 2>/dev/null; true' EXIT
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv > $R/smi.csv; cat $R/smi.csv
for v in ${@:-cupy cupy_sync torch_gather cupy_nowrap cupy_stream}; do timeout 120 python3 .dbg/paging/repro_order.py $v >> $R/repro_order.log 2>&1 || echo "$v rc $?"; done
cat $R/repro_order.log | cut -c1-200
