# bash .dbg/s60/run_e.sh <full sha, given literally>; carry .whl_min, .dbg/s60: a probe for the next change, none made:
# the calls of 2 GB or more still under 4.4 TB/s (17, 20, 28 x 32k; 72 x 8k) against split counts that make whole waves
# of their build's slots (units x splits a multiple of 264 at 2 per SM or 528 at 4 per SM), and 20 x 32k's 28 units
# past the SMs in 4 tail splits; cold p50 of 20, shuffled, one round
T0=$(date +%s)
R=/tmp/rese; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/rese -czf $OUT/res.tgz . ; cp /tmp/rese/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
probe() {  # batch kv_len builds...
  b=$1; n=$2; shift 2; f=$R/cmp_${b}x${n}; args=""; for k in "$@"; do args="$args --build $k"; done
  timeout 120 python3 -m labkit decode compare --batch $b --kv-len $n $args --iterations 20 --out $f.json > $f.log 2>&1 || echo "rc $? at $b $n"
  { echo "== $b x $n ($(( $(date +%s) - T0 )) s)"; grep -E "^ +$b +$n " $f.log | cut -c1-200; } | tee -a $R/summary.txt
}
probe 20 32768 stages=3,splits=1,tail_units=28,tail_splits=4 stages=3,splits=33 stages=1,qk_chains=1,splits=33
probe 28 32768 stages=3,splits=33 stages=1,qk_chains=1,splits=33
probe 17 32768 stages=3,splits=33 stages=1,qk_chains=1,splits=31
probe 72 8192 stages=3,splits=11 stages=1,qk_chains=1,splits=11
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $R/summary.txt
