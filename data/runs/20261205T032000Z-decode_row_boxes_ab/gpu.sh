# Next GPU session (planned 2026-12-05, no device lent): from a checkout of branch gpu-next (main + proxy-fence +
# row-boxes), carry [".whl_nbl", ".dbg/s68", ".dbg/s69", ".dbg/s70"]:  bash .dbg/s70/gpu.sh <full sha> tests|notebooks|ab
#  tests      (~7 min) every GPU test: the proxy fence (persistent), row boxes, NaN/Inf past each sequence, ncu shares in
#             percent, and the rest. All pass -> merge proxy-fence (and row-boxes if its A/B wins) into main.
#  notebooks  (~8 min) .dbg/s69/validate.sh's live notebooks (00 02 03 04 05 small) and the SIGKILLed decode.point sweep,
#             then labkit nb script 00 under ncu (make profile-00's path)
#  ab         (~6 min) .dbg/s68/next.sh's row-box compare and rows_ab (its GPU test ran in `tests`)
T0=$(date +%s)
R=/tmp/res70; rm -rf $R; mkdir -p $R; trap 'cp -r /tmp/res70/* $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nbl/*.whl $(ls .whl_ncu/*.whl 2>/dev/null) 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1 R
nvidia-smi --query-gpu=name,uuid,driver_version,vbios_version,clocks.sm,clocks.mem --format=csv,noheader | tee $R/smi.csv
nvidia-smi -q | grep -E "Board Part" | head -1 | tee -a $R/smi.csv
case "$2" in
tests)
  timeout 560 python3 -m pytest -q -rs -p no:cacheprovider -m gpu tests/gpu --durations=15 2>&1 | tee $R/gpu.log | tail -40 ;;
notebooks)
  timeout 150 python3 -m pytest -q -p no:cacheprovider -m gpu tests/gpu/test_ncu_gpu.py 2>&1 | tail -4 | tee $R/ncu_tests.log
  for nb in "00 -p launches 500 -p cold_l2_mib 16,256" "02 -p iterations 3 -p tail_iterations 2 -p precision_iterations 2" \
            "03 -p batch 1,64 -p kv_lens 1024,8192 -p iterations 10 -p splits_at 8,1024" \
            "04 -p workload decode -p decode_batches 1,8,64 -p decode_splits 1,2,8" \
            "05 -p q_tail 37760 -p kv_tail 37760 -p decode_batch 8 -p decode_kv_lens 1024 -p iterations 5"; do
    set -- $nb; n=$1; shift
    timeout 150 python3 -m labkit nb run $n -p source live "$@" > $R/nb$n.log 2>&1; echo "nb $n rc $? at $(( $(date +%s) - T0 )) s"
    tail -3 $R/nb$n.log | cut -c1-200
  done
  mkdir -p $R/runs; cp -r runs/*-0* $R/runs/ 2>/dev/null
  S=$R/sweep
  python3 -m labkit sweep run --workload decode.point --grid batch=1,8,16,32 --grid kv_len=1024,2048 --out $S \
    --executor processes --workers 1 > $R/sweep1.log 2>&1 &
  P=$!
  for i in $(seq 1 600); do [ "$(ls $S/points 2>/dev/null | grep -c json)" -ge 3 ] && break; sleep 0.1; done
  kill -9 $P; sleep 3; echo "points at kill: $(ls $S/points | grep -c json)"; sleep 3
  echo "points 3 s later: $(ls $S/points | grep -c json); workers left: $(pgrep -fc multiprocessing.spawn)"
  timeout 120 python3 -m labkit sweep run --workload decode.point --grid batch=1,8,16,32 --grid kv_len=1024,2048 \
    --out $S --executor processes --workers 1 2>&1 | tail -2
  python3 -m labkit sweep collect $S | cut -c1-160
  python3 -m labkit nb script 00 -p launches 500 -p cold_l2_mib 16 --out /tmp/s00.py | tee $R/script.log
  timeout 120 python3 -m labkit ncu run --out $R/script00 --launch-count 5 -- python3 /tmp/s00.py 2>&1 | tail -5
  python3 -m labkit ncu show $R/script00.ncu-rep 2>&1 | head -12 ;;
ab)
  for pt in "16 4096" "16 32768" "64 8192" "1 8192" "8 8192"; do
    set -- $pt
    timeout 60 python3 -m labkit decode compare --batch $1 --kv-len $2 --build row_boxes=1 --iterations 40 \
      --out $R/compare_${1}x${2}.json 2>&1 | tee $R/compare_${1}x${2}.log | tail -4
  done
  timeout 150 python3 .dbg/s68/rows_ab.py 2>&1 | tee $R/rows_ab.log | tail -70 ;;
esac
echo "elapsed $(( $(date +%s) - T0 )) s"
