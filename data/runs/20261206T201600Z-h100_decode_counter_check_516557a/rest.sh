#!/usr/bin/env bash
# the decode GPU tests the first call did not reach (.dbg/s90/done.txt deselects those that passed there)
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
timeout ${BY:-320} python3 -m pytest -v -rs -p no:cacheprovider -m gpu tests/gpu/test_decode_gpu.py $(cat .dbg/s90/done.txt) > $OUT/decode_rest.log 2>&1
echo "decode rest rc=$? $(tail -1 $OUT/decode_rest.log | cut -c1-200)" | tee $OUT/summary_rest.txt
grep -E "counter_left_off|timed_calls_write" $OUT/decode_rest.log | cut -c1-160 | tee -a $OUT/summary_rest.txt
grep -hE "^(FAILED|ERROR)" $OUT/decode_rest.log | head -8 | cut -c1-300
