# bash .dbg/s54/run_e.sh <full sha>; carry .whl_nb, .whl_peers, .dbg: the 67-118 unit rule's GPU test, its A/B
# against the build it replaced (one round, cold p50 of 20), then notebooks 03 04 02 01 00 live with --record
T0=$(date +%s)
R=/tmp/rese; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/rese -czf $OUT/res.tgz . ; cp /tmp/rese/summary.txt $OUT/ 2>/dev/null; true' EXIT
touch /tmp/markere; sleep 1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nb/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
s=$(date +%s); timeout 60 python3 -m pytest -q -p no:cacheprovider -rs -m gpu tests/gpu/test_decode_gpu.py -k "72_units or one_8_warp_cta_per_sm" > $R/gpu_rule.log 2>&1 || echo "tests rc $?"
{ echo "== rule GPU tests ($(( $(date +%s) - s )) s)"; tail -1 $R/gpu_rule.log; grep -E "^(FAILED|ERROR)" $R/gpu_rule.log | head; } | tee -a $R/summary.txt
mkdir -p $R/ab
for p in "13 8192 64 32 8 2" "14 4096 64 32 8 2" "13 1024 64 32 8 2" "14 16384 64 32 8 2" "9 1024 64 32 8 3" "12 8192 64 64 8 2" "24 8192 64 24 4 2"; do
  set -- $p; f=$R/ab/cmp_${1}x${2}_p${3}_h${4}-${5}
  timeout 60 python3 -m labkit decode compare --batch $1 --kv-len $2 --page-size $3 --heads-q $4 --heads-kv $5 --build splits=$6 --iterations 20 --out $f.json > $f.log 2>&1 || echo "rc $? at $p"
  { echo "== $1 x $2 p$3 $4/$5 ($(( $(date +%s) - T0 )) s)"; grep -E "^ +$1 +$2 " $f.log | cut -c1-200; } | tee -a $R/summary.txt
done
f=$R/ab/cmp_12x8192_p32_h32-8; timeout 60 python3 -m labkit decode compare --batch 12 --kv-len 8192 --page-size 32 --build warps=8,stages=2,splits=1 --iterations 20 --out $f.json > $f.log 2>&1 || echo "rc $? at p32"
{ echo "== 12 x 8192 p32 ($(( $(date +%s) - T0 )) s)"; grep -E "^ +12 +8192 " $f.log | cut -c1-200; } | tee -a $R/summary.txt
tar -C $R -czf $OUT/res.tgz .
for nb in 03 04 02 01 00; do
  left=$(( 585 - ($(date +%s) - T0) ))
  [ $left -lt 30 ] && { echo "no time left for $nb" | tee -a $R/summary.txt; break; }
  s=$(date +%s); LABKIT_OUT=$R/nb timeout $left python3 -m labkit nb run $nb --record > $R/run_$nb.log 2>&1 || echo "$nb rc $?"
  echo "$nb $(( $(date +%s) - s )) s (limit $left): $(tail -1 $R/run_$nb.log | cut -c1-160)" | tee -a $R/summary.txt
  mkdir -p $R/rec; for d in data/runs/*; do [ -f $d/run.json ] && [ $d -nt /tmp/markere ] && cp -r $d $R/rec/; done
  tar -C $R -czf $OUT/res.tgz .
done
echo "elapsed $(( $(date +%s) - T0 )) s"
