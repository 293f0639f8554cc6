# bash .dbg/s54/run_a.sh <full sha>; carry .whl_nb, .whl_peers, .dbg: notebooks 03 04 02 01 00 live with --record,
# then make bench's two tables (decode with its peers, Sage2), then labkit beside its peers over a dense grid of d128
# calls (pages of 64, 32/8 heads), one bench per kv_len, each one's JSON kept
T0=$(date +%s)
R=/tmp/resa; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resa -czf $OUT/res.tgz . ; cp /tmp/resa/summary.txt $OUT/ 2>/dev/null; true' EXIT
touch /tmp/markera; sleep 1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nb/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
for nb in 03 04 02 01 00; do
  left=$(( 585 - ($(date +%s) - T0) ))
  [ $left -lt 30 ] && { echo "no time left for $nb" | tee -a $R/summary.txt; break; }
  s=$(date +%s); LABKIT_OUT=$R/nb timeout $left python3 -m labkit nb run $nb --record > $R/run_$nb.log 2>&1 || echo "$nb rc $?"
  echo "$nb $(( $(date +%s) - s )) s (limit $left): $(tail -1 $R/run_$nb.log | cut -c1-160)" | tee -a $R/summary.txt
  mkdir -p $R/rec; for d in data/runs/*; do [ -f $d/run.json ] && [ $d -nt /tmp/markera ] && cp -r $d $R/rec/; done
  tar -C $R -czf $OUT/res.tgz .  # after each notebook: a call cut short keeps what finished
done
left=$(( 585 - ($(date +%s) - T0) ))
if [ $left -gt 40 ]; then
  s=$(date +%s); timeout $left python3 -m labkit decode bench --peers --out $R/bench.json > $R/bench.log 2>&1 || echo "decode bench rc $?"
  { echo "== decode bench ($(( $(date +%s) - s )) s)"; tail -28 $R/bench.log | cut -c1-220; } | tee -a $R/summary.txt
  tar -C $R -czf $OUT/res.tgz .
fi
left=$(( 588 - ($(date +%s) - T0) ))
if [ $left -gt 35 ]; then
  s=$(date +%s); timeout $left python3 -m labkit bench --schedule sm90 > $R/sage2_bench.log 2>&1 || echo "sage2 bench rc $?"
  { echo "== sage2 bench ($(( $(date +%s) - s )) s)"; tail -20 $R/sage2_bench.log | cut -c1-200; } | tee -a $R/summary.txt
fi
mkdir -p $R/grid
for kv in 1024 2048 4096 8192 16384 32768; do
  left=$(( 588 - ($(date +%s) - T0) ))
  [ $left -lt 40 ] && { echo "no time left for kv $kv" | tee -a $R/summary.txt; break; }
  pts=""; for b in 1 2 3 4 6 8 12 16 24 32 48 64 96 128 256; do
    [ $kv -eq 32768 ] && [ $b -gt 64 ] && continue
    pts="$pts --point ${b}x$kv"; done
  s=$(date +%s); timeout $left python3 -m labkit decode bench --peers $pts --iterations 20 --out $R/grid/kv$kv.json > $R/grid/kv$kv.log 2>&1 || echo "bench rc $? at kv $kv"
  { echo "== kv $kv ($(( $(date +%s) - s )) s)"; grep -E "^ +[0-9]+ +$kv " $R/grid/kv$kv.log | cut -c1-220; } | tee -a $R/summary.txt
  tar -C $R -czf $OUT/res.tgz .
done
echo "elapsed $(( $(date +%s) - T0 )) s"
