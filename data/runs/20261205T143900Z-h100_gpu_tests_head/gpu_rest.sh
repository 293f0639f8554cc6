#!/usr/bin/env bash
# The decode GPU tests the first call's time limit left (tests 167-192 of test_decode_gpu.py), on the same warm H100.
T0=$(date +%s)
[ -d /tmp/site/papermill ] || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
python3 -m pytest -q --co -p no:cacheprovider -m gpu tests/gpu/test_decode_gpu.py 2>/dev/null | grep "::" > /tmp/ids.txt
wc -l < /tmp/ids.txt | tee $OUT/ids_count.txt
tail -n +167 /tmp/ids.txt > $OUT/rest_ids.txt
timeout $(( 280 - ($(date +%s) - T0) )) python3 -m pytest -q -rs -p no:cacheprovider -m gpu $(cat $OUT/rest_ids.txt) > $OUT/decode_rest.log 2>&1
echo "rc=$? at $(( $(date +%s) - T0 )) s" >> $OUT/decode_rest.log; tail -6 $OUT/decode_rest.log
