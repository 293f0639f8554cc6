# As run on the device from the repository root (bash .dbg/run_v.sh <full sha>): the whole GPU suite at the
# session's starting commit (the split-count semantics, the pair rule's guards and the new GPU tests had not run
# on a GPU), then notebook 04 live, whose Gantt cell now asks for the plan's own call.
R=/tmp/res; mkdir -p $R; trap 'tar -C /tmp/res -czf $OUT/res.tgz . ; cp /tmp/res/*.log /tmp/res/*.csv $OUT/ 2>/dev/null; true' EXIT
touch -d '1 minute ago' /tmp/marker
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl .whl_ncu/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
s=$(date +%s); timeout 330 python3 -m pytest -q -m gpu tests/gpu -p no:cacheprovider > $R/gpu_tests.log 2>&1 || echo "pytest rc $?"; echo "pytest $(( $(date +%s) - s )) s"; grep -E "FAILED|ERROR" $R/gpu_tests.log | head; tail -3 $R/gpu_tests.log
s=$(date +%s); LABKIT_OUT=$R/nb timeout 200 python3 -m labkit nb run 04 --record > $R/nb04.log 2>&1 || echo "nb04 rc $?"; echo "nb04 $(( $(date +%s) - s )) s"; tail -3 $R/nb04.log
mkdir -p $R/rec; for d in data/runs/*; do [ -f $d/run.json ] && [ $d -nt /tmp/marker ] && cp -r $d $R/rec/; done; ls $R/rec
