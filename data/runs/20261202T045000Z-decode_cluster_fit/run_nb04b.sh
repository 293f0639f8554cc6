# As run on the device from the repository root (bash .dbg/run_nb04b.sh <full sha>): after the cluster fit, notebook
# 04 at d256 with 24/4 heads (decode only, not recorded): every call of the batch sweep should run in one wave.
R=/tmp/res7; mkdir -p $R; trap 'tar -C /tmp/res7 -czf $OUT/res.tgz . ; cp /tmp/res7/*.log $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
s=$(date +%s); LABKIT_OUT=$R/nb timeout 200 python3 -m labkit nb run 04 -p workload decode -p decode_head_dim 256 -p decode_heads 24,4 > $R/nb04_d256.log 2>&1 || echo "nb04 d256 rc $?"; echo "nb04 d256 $(( $(date +%s) - s )) s"; tail -4 $R/nb04_d256.log
python3 -c "
import csv, glob
for r in csv.DictReader(open(glob.glob('$R/nb/*/data/decode_points.csv')[0])):
    print(r['sweep'], r['batch'], r['splits'], r['kernel'], r['ctas'], r['full_waves'], r['measured_waves'], r['makespan_us'])
"
