#!/usr/bin/env bash
# bash .dbg/s86/rest.sh <full sha>, carry .dbg/s86: the decode GPU tests of the builds whose manifests the new rules
# hold and that the final call's time did not reach (persistent CTAs, wide and row boxes, page ids a stage ahead).
set -uo pipefail
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid --format=csv,noheader | tee $OUT/device_rest.txt
timeout 170 python3 -m pytest -q -rs -p no:cacheprovider -m gpu $(cat .dbg/s86/rest_ids.txt) > $OUT/rest.log 2>&1
echo "rc=$? $(tail -1 $OUT/rest.log)" | tee $OUT/rest_summary.txt
grep -E "^(FAILED|ERROR)" $OUT/rest.log | head -8 | cut -c1-300
