# bash .dbg/s48/run_nb.sh <full sha>; NBS="03 04 02" with .whl_min .whl_peers (and CMP=1: the one-split A/B first), or
# NBS="05 01 00" with .whl_min .whl_ncu
T0=${T0:-$(date +%s)}
R=/tmp/resn; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resn -czf $OUT/res.tgz . ; true' EXIT
touch /tmp/markern; sleep 1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site ${WHL:-.whl_min}/*.whl $(ls .whl_ncu/*.whl .whl_peers/*.whl 2>/dev/null) 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
if [ -n "${CMP:-}" ]; then
  for pt in "16 2048" "16 4096" "16 8192" "16 32768" "15 4096"; do set -- $pt
    timeout 100 python3 -m labkit decode compare --batch $1 --kv-len $2 --build splits=2 --iterations 20 --out $R/cmp_$1x$2.json > $R/cmp_$1x$2.log 2>&1 || echo "rc $?"
    grep -E "^ +$1 +$2" $R/cmp_$1x$2.log | cut -c1-200
  done
fi
for nb in $NBS; do
  left=$(( ${NB_UNTIL:-470} - ($(date +%s) - T0) ))
  [ $left -lt 40 ] && { echo "no time left for $nb"; break; }
  s=$(date +%s); LABKIT_OUT=$R/nb timeout $left python3 -m labkit nb run $nb --record > $R/run_$nb.log 2>&1 || echo "$nb rc $?"; echo "$nb $(( $(date +%s) - s )) s (limit $left)"; tail -1 $R/run_$nb.log | cut -c1-200
  mkdir -p $R/rec; for d in data/runs/*; do [ -f $d/run.json ] && [ $d -nt /tmp/markern ] && cp -r $d $R/rec/; done
  tar -C $R -czf $OUT/res.tgz .  # after each notebook: a call cut short keeps what finished
done
mkdir -p $R/rec; for d in data/runs/*; do [ -f $d/run.json ] && [ $d -nt /tmp/markern ] && cp -r $d $R/rec/; done; ls $R/rec | tail -8
