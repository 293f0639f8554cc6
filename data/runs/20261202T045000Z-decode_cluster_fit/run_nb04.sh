# As run on the device from the repository root (bash .dbg/run_nb04.sh <full sha>): notebook 04 live and recorded with
# its new decode geometry parameters at their defaults, again at d256 with 24/4 heads (not recorded), and with 32/7
# heads (refused before anything runs).
R=/tmp/res6; mkdir -p $R; trap 'tar -C /tmp/res6 -czf $OUT/res.tgz . ; cp /tmp/res6/*.log $OUT/ 2>/dev/null; true' EXIT
touch /tmp/marker6; sleep 1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
s=$(date +%s); LABKIT_OUT=$R/nb timeout 200 python3 -m labkit nb run 04 --record > $R/nb04.log 2>&1 || echo "nb04 rc $?"; echo "nb04 $(( $(date +%s) - s )) s"; tail -5 $R/nb04.log
s=$(date +%s); LABKIT_OUT=$R/nb timeout 200 python3 -m labkit nb run 04 -p workload decode -p decode_head_dim 256 -p decode_heads 24,4 > $R/nb04_d256.log 2>&1 || echo "nb04 d256 rc $?"; echo "nb04 d256 $(( $(date +%s) - s )) s"; tail -5 $R/nb04_d256.log
LABKIT_OUT=$R/nb timeout 100 python3 -m labkit nb run 04 -p workload decode -p decode_heads 32,7 > $R/nb04_bad.log 2>&1; echo "nb04 bad heads rc $?"; tail -4 $R/nb04_bad.log
mkdir -p $R/rec; for d in data/runs/*; do [ -f $d/run.json ] && [ $d -nt /tmp/marker6 ] && cp -r $d $R/rec/; done; ls $R/rec
