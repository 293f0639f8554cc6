# bash .dbg/s53/run_b.sh <full sha>; carry .whl_nb, .whl_peers, .dbg: the rule's A/B (the plan's split calls of 16-44
# long units in one 8-warp CTA per SM against the 4-warp splits at 2 per SM, two rounds); if it passes gate.py,
# notebooks 03 04 02 01 00 live with --record, the decode GPU tests and the rule's calls beside the peers
T0=$(date +%s)
R=/tmp/resb; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resb -czf $OUT/res.tgz . ; cp /tmp/resb/summary.txt $OUT/ 2>/dev/null; true' EXIT
touch /tmp/markerb; sleep 1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nb/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
mkdir -p $R/ab
for round in 1 2; do
for p in "4 16384" "2 16384" "3 16384" "4 8192" "4 32768" "5 16384" "2 32768" "3 8192" "2 8192" "5 8192" "4 4096" "6 16384"; do
  set -- $p; f=$R/ab/cmp_${1}x${2}_r$round
  case "$p" in "4 4096"|"6 16384") b="warps=8,stages=2";; *) b="stages=3";; esac
  timeout 60 python3 -m labkit decode compare --batch $1 --kv-len $2 --build $b --iterations 20 --out $f.json > $f.log 2>&1 || echo "rc $? at $p"
  { echo "== r$round $1 x $2 ($(( $(date +%s) - T0 )) s)"; grep -E "^ +$1 +$2 " $f.log | cut -c1-200; } | tee -a $R/summary.txt
done; done
python3 .dbg/s53/gate.py $R/ab 2>&1 | tee -a $R/summary.txt; gate=${PIPESTATUS[0]}
tar -C $R -czf $OUT/res.tgz .
[ "$gate" = 0 ] || { echo "gate failed: nothing recorded"; exit 0; }
for nb in 03 04 02 01 00; do
  left=$(( 585 - ($(date +%s) - T0) ))
  [ $left -lt 30 ] && { echo "no time left for $nb" | tee -a $R/summary.txt; break; }
  s=$(date +%s); LABKIT_OUT=$R/nb timeout $left python3 -m labkit nb run $nb --record > $R/run_$nb.log 2>&1 || echo "$nb rc $?"
  echo "$nb $(( $(date +%s) - s )) s (limit $left): $(tail -1 $R/run_$nb.log | cut -c1-160)" | tee -a $R/summary.txt
  mkdir -p $R/rec; for d in data/runs/*; do [ -f $d/run.json ] && [ $d -nt /tmp/markerb ] && cp -r $d $R/rec/; done
  tar -C $R -czf $OUT/res.tgz .
done
left=$(( 585 - ($(date +%s) - T0) ))
if [ $left -gt 60 ]; then
  s=$(date +%s); timeout $(( left - 45 )) python3 -m pytest -q -p no:cacheprovider -rs -m gpu tests/gpu/test_decode_gpu.py > $R/gpu_decode.log 2>&1 || echo "tests rc $?"
  { echo "== decode GPU tests ($(( $(date +%s) - s )) s, limit $(( left - 45 )))"; tail -1 $R/gpu_decode.log; grep -E "^(FAILED|ERROR)" $R/gpu_decode.log | head; } | tee -a $R/summary.txt
  tar -C $R -czf $OUT/res.tgz .
fi
left=$(( 588 - ($(date +%s) - T0) ))
if [ $left -gt 30 ]; then
  s=$(date +%s); timeout $left python3 -m labkit decode bench --peers --point 4x16384 --point 2x16384 --point 3x16384 --point 4x8192 --point 5x16384 --iterations 20 --out $R/bench_points.json > $R/bench_points.log 2>&1 || echo "bench rc $?"
  { echo "== bench points ($(( $(date +%s) - s )) s)"; tail -16 $R/bench_points.log | cut -c1-220; } | tee -a $R/summary.txt
fi
echo "elapsed $(( $(date +%s) - T0 )) s"
