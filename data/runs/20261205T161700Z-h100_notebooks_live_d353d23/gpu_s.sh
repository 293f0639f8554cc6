#!/usr/bin/env bash
# This session's GPU calls at main's HEAD (sha given literally), carry [".whl", ".dbg/gpu_s.sh"]:
#   tests  every GPU test (-m gpu tests/gpu), incl. the timing tests fixed after the first H100 run (never on an H200)
#   nb     every notebook live with its defaults, recorded (labkit nb run-all --record)
#   bench  make bench's two commands (carry .whl-fa3: nvtx, fa3-fwd, einops for the FA3 peer)
T0=$(date +%s)
set -uo pipefail
touch /tmp/start
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site $(ls .whl/*.whl .whl-fa3/*.whl 2>/dev/null) 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache
export LABKIT_GIT_SHA=$1 LABKIT_NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
nvidia-smi --query-gpu=name,uuid,driver_version,vbios_version,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw --format=csv | tee $OUT/smi.csv
nvidia-smi -q | grep -E "Board Part" | head -1 | tee -a $OUT/smi.csv
lscpu | grep -E "Model name" | tee -a $OUT/smi.csv
case "$2" in
tests)
  # the files today's changes reach first (the runner's pack, ncu's target check, the timing fixes), Sage2's last
  for f in test_timing_gpu test_manifest_gpu test_sched_gpu test_ncu_gpu test_decode_gpu test_sage2_gpu; do
    left=$(( 585 - ($(date +%s) - T0) )); [ $left -gt 20 ] || { echo "$f: not run (time)" | tee -a $OUT/summary.txt; continue; }
    timeout $left python3 -m pytest -q -rs -p no:cacheprovider -m gpu tests/gpu/$f.py > $OUT/$f.log 2>&1
    echo "$f rc=$? $(tail -1 $OUT/$f.log) at $(( $(date +%s) - T0 )) s" | tee -a $OUT/summary.txt
  done
  grep -h -E "^(FAILED|ERROR|SKIPPED)" $OUT/test_*.log | head -20 ;;
nb)
  timeout 400 python3 -m labkit nb run-all --record > $OUT/nb_all.log 2>&1; echo "rc=$? at $(( $(date +%s) - T0 )) s" >> $OUT/nb_all.log
  grep -E "ok|FAIL|rc=|error|Error" $OUT/nb_all.log | cut -c1-220 | tail -30
  find data/runs -newer /tmp/start -type f | tar czf $OUT/nb_record.tgz -T - ;;
bench)
  left=585
  timeout $(( left / 2 )) python3 -m labkit bench --schedule sm90 > $OUT/sage2_bench.log 2>&1; echo "rc=$?" >> $OUT/sage2_bench.log
  tail -22 $OUT/sage2_bench.log | cut -c1-230
  left=$(( 590 - ($(date +%s) - T0) )); [ $left -gt 30 ] || exit 0
  timeout $left python3 -m labkit decode bench --peers --out $OUT/decode_sweep.json > $OUT/decode_sweep.log 2>&1; echo "rc=$?" >> $OUT/decode_sweep.log
  tail -30 $OUT/decode_sweep.log | cut -c1-250 ;;
esac
echo "elapsed $(( $(date +%s) - T0 )) s"
