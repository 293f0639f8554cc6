# bash .dbg/s51/run3.sh <full sha>; carry .whl_nb, .dbg: at 16 x 4k and 32 x 4k d128 with pages of 16, the one-stage
# build (bounded to 4 CTAs per SM since e139c50) in more splits against the plan's 2-stage ring
T0=$(date +%s)
R=/tmp/res3; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/res3 -czf $OUT/res.tgz . ; cp /tmp/res3/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nb/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
cmp() { b=$1; n=$2; shift 2; args=(); for s in "$@"; do args+=(--build "$s"); done
  timeout 100 python3 -m labkit decode compare --batch $b --kv-len $n --page-size 16 "${args[@]}" --iterations 40 --out $R/cmp_${b}x${n}_p16.json > $R/cmp_${b}x${n}_p16.log 2>&1 || echo "rc $? at $b x $n"
  { echo "== $b x $n p16 ($(( $(date +%s) - T0 )) s)"; grep -E "^ +$b +$n " $R/cmp_${b}x${n}_p16.log | cut -c1-220; } | tee -a $R/summary.txt; }
cmp 16 4096 stages=1,qk_chains=1,splits=4 stages=1,qk_chains=1,splits=3 stages=1,splits=4
cmp 32 4096 stages=1,qk_chains=1,splits=2 stages=1,qk_chains=1,splits=1
echo "elapsed $(( $(date +%s) - T0 )) s"
