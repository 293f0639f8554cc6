# bash .dbg/s61/run_h.sh <full sha, given literally>; carry .whl_nbl, .whl_peers, .dbg/s61: a diagnosis, no change:
# the kernels' own durations inside labkit decode bench --peers (its memset flush, dirty L2, the interleaved rounds),
# by ncu with one metric (gpu__time_duration: one pass, no replay) and no cache or clock control, at 16 x 4k and 32 x 2k
T0=$(date +%s)
R=/tmp/resh; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resh -czf $OUT/res.tgz . ; cp /tmp/resh/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nbl/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
python3 -m labkit decode bench --peers --point 16x4096 --point 32x2048 --iterations 10 > $R/warm.log 2>&1 || echo "warm rc $?"
timeout 240 ncu --metrics gpu__time_duration.sum --cache-control none --clock-control none --kernel-name "regex:paged_decode|cudnn_generated" --csv --print-units base \
  python3 -m labkit decode bench --peers --point 16x4096 --point 32x2048 --iterations 10 > $R/ncu_bench.csv 2> $R/ncu_bench.err || echo "ncu rc $?"
grep -E "^ +(batch|[0-9]+) +" $R/warm.log | cut -c1-230 | tee -a $R/summary.txt
python3 - $R/ncu_bench.csv <<'PY' | tee -a $R/summary.txt
import csv, sys, statistics, collections
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"'))]
head, body = rows[0], rows[1:]
ix = {k: head.index(k) for k in ("Kernel Name", "Grid Size", "Metric Value")}
by = collections.defaultdict(list)
for r in body:
    by[(r[ix["Kernel Name"]][:24], r[ix["Grid Size"]])].append(float(r[ix["Metric Value"]].replace(",", "")) / 1e3)
for k, v in by.items():
    print(f"{k[0]:24s} grid {k[1]:14s} n={len(v):3d} median {statistics.median(v):8.2f} us  min {min(v):8.2f}  max {max(v):8.2f}")
PY
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $R/summary.txt
