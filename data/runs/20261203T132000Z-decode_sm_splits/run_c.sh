# bash .dbg/s53/run_c.sh <sha with 16-55 units> <sha with 16-44>; carry .whl_nb, .whl_peers, .dbg: the A/B of 45-55
# long units in 2 clustered 8-warp splits against the 4-warp splits; unless it passes gate.py, plan.py of the second sha;
# then notebooks 03 04 02 01 00 live with --record and the decode GPU tests
T0=$(date +%s)
R=/tmp/resc; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resc -czf $OUT/res.tgz . ; cp /tmp/resc/summary.txt $OUT/ 2>/dev/null; true' EXIT
touch /tmp/markerc; sleep 1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nb/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
mkdir -p $R/ab
for round in 1 2; do
for p in "6 16384" "6 8192" "7 8192" "7 16384" "6 32768"; do
  set -- $p; f=$R/ab/cmp_${1}x${2}_r$round
  timeout 60 python3 -m labkit decode compare --batch $1 --kv-len $2 --build stages=3 --iterations 20 --out $f.json > $f.log 2>&1 || echo "rc $? at $p"
  { echo "== r$round $1 x $2 ($(( $(date +%s) - T0 )) s)"; grep -E "^ +$1 +$2 " $f.log | cut -c1-200; } | tee -a $R/summary.txt
done; done
python3 .dbg/s53/gate.py $R/ab 2>&1 | tee -a $R/summary.txt; gate=${PIPESTATUS[0]}
if [ "$gate" != 0 ]; then  # the 45-55 unit extension not kept: record the plan of 16-44 units
  cp .dbg/s53/plan_3c86146.py labkit/workloads/decode/plan.py; export LABKIT_GIT_SHA=$2; echo "recording at $2" | tee -a $R/summary.txt
fi
tar -C $R -czf $OUT/res.tgz .
for nb in 03 04 02 01 00; do
  left=$(( 585 - ($(date +%s) - T0) ))
  [ $left -lt 30 ] && { echo "no time left for $nb" | tee -a $R/summary.txt; break; }
  s=$(date +%s); LABKIT_OUT=$R/nb timeout $left python3 -m labkit nb run $nb --record > $R/run_$nb.log 2>&1 || echo "$nb rc $?"
  echo "$nb $(( $(date +%s) - s )) s (limit $left): $(tail -1 $R/run_$nb.log | cut -c1-160)" | tee -a $R/summary.txt
  mkdir -p $R/rec; for d in data/runs/*; do [ -f $d/run.json ] && [ $d -nt /tmp/markerc ] && cp -r $d $R/rec/; done
  tar -C $R -czf $OUT/res.tgz .
done
left=$(( 585 - ($(date +%s) - T0) ))
if [ $left -gt 60 ]; then
  s=$(date +%s); timeout $(( left - 10 )) python3 -m pytest -q -p no:cacheprovider -rs -m gpu tests/gpu/test_decode_gpu.py > $R/gpu_decode.log 2>&1 || echo "tests rc $?"
  { echo "== decode GPU tests ($(( $(date +%s) - s )) s, limit $(( left - 10 )))"; tail -1 $R/gpu_decode.log; grep -E "^(FAILED|ERROR)" $R/gpu_decode.log | head; } | tee -a $R/summary.txt
  tar -C $R -czf $OUT/res.tgz .
fi
echo "elapsed $(( $(date +%s) - T0 )) s"
