# bash .dbg/s51/run2.sh <sha>; carry .whl_nb, .whl_peers, .dbg: min_ctas A/Bs at pages of 16 (the bounded plan against
# the plan of 90655c8), the page-16 GPU tests, then the page-16 bench beside the peers
T0=$(date +%s)
R=/tmp/res51; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/res51 -czf $OUT/res.tgz . ; cp /tmp/res51/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nb/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
s=$(date +%s)
timeout 260 python3 .dbg/s51/ab_min.py $R/ab_min.json 20 > $R/ab_min.log 2>&1 || echo "ab rc $?"
{ echo "== ab_min ($(( $(date +%s) - s )) s)"; grep -v "/SM$" $R/ab_min.log | cut -c1-230; } | tee -a $R/summary.txt
s=$(date +%s)
timeout 170 python3 -m pytest -q -m gpu tests/gpu/test_decode_gpu.py -p no:cacheprovider -rs -k "p16 or pages_of_16" > $R/gpu_p16.log 2>&1 || echo "tests rc $?"
{ echo "== GPU tests p16 ($(( $(date +%s) - s )) s)"; tail -3 $R/gpu_p16.log; grep -E "^(FAILED|ERROR)" $R/gpu_p16.log | head; } | tee -a $R/summary.txt
left=$(( 585 - ($(date +%s) - T0) ))
s=$(date +%s)
timeout $left python3 -m labkit decode bench --point 16x4096 --point 256x1024 --point 64x1024 --point 8x8192 --point 1x8192 --point 64x8192 --page-size 16 --peers --out $R/bench_p16.json > $R/bench_p16.log 2>&1 || echo "bench rc $?"
{ echo "== bench p16 ($(( $(date +%s) - s )) s)"; tail -22 $R/bench_p16.log | cut -c1-230; } | tee -a $R/summary.txt
echo "elapsed $(( $(date +%s) - T0 )) s"
