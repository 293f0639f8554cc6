# bash .dbg/s64/run_a.sh <full sha, given literally>; carry .whl_nbl: row_halves=1 (the softmax over the 16-row
# tile's first 8 rows alone) - its GPU test, then labkit decode compare against the plan at the bench's calls
T0=$(date +%s)
R=/tmp/resa; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resa -czf $OUT/res.tgz . ; cp /tmp/resa/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nbl/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
s=$(date +%s); timeout 200 python3 -m pytest -q -p no:cacheprovider -rs -m gpu tests/gpu/test_decode_gpu.py -k row_halves > $R/gpu_row_halves.log 2>&1 || echo "tests rc $?"
{ echo "== row_halves GPU test ($(( $(date +%s) - s )) s)"; tail -1 $R/gpu_row_halves.log; grep -E "^(FAILED|ERROR)|Error" $R/gpu_row_halves.log | head; } | tee -a $R/summary.txt
for pt in "1 8192 128 32 8" "16 4096 128 32 8" "1 32768 128 32 8" "8 8192 128 32 8" "16 8192 128 32 8" "32 2048 128 32 8" "64 1024 128 32 8" "8 1024 128 32 8" "2 704 256 24 4" "1 8192 256 32 8" "256 1024 128 32 8" "64 8192 128 32 8" "8 32768 256 32 8" "64 1024 256 32 8"; do
  set -- $pt; left=$(( 560 - ($(date +%s) - T0) )); [ $left -lt 25 ] && { echo "no time left for $pt" | tee -a $R/summary.txt; break; }
  tag=b$1_n$2_d$3_h$4-$5
  timeout $left python3 -m labkit decode compare --batch $1 --kv-len $2 --head-dim $3 --heads-q $4 --heads-kv $5 --build row_halves=1 --iterations 40 --out $R/cmp_$tag.json > $R/cmp_$tag.log 2>&1 || echo "rc $? at $tag" | tee -a $R/summary.txt
  { echo "== $tag ($(( $(date +%s) - T0 )) s)"; grep -E "plan|row_halves" $R/cmp_$tag.log | tail -3; } | tee -a $R/summary.txt
done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $R/summary.txt
