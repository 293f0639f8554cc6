#!/usr/bin/env bash
# bash .dbg/s99/rest_large.sh <sha>: the peer map's rest_large calls (.dbg/s94/run.sh's list) on this H200, beside the peers
nvidia-smi --query-gpu=name,uuid --format=csv,noheader
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-all3/*.whl 2>&1 | tail -2
python3 -c "import tarfile; tarfile.open('.whl-all3/fa3.tar.xz').extractall('/tmp/site')"
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
rest_large=$(grep '^rest_large=' .dbg/s94/run.sh | cut -d'"' -f2)
pts=$(for p in $rest_large; do echo -n "--point $p "; done)
mkdir -p $OUT/map
timeout 480 python3 -m labkit decode bench --peers $pts --iterations 20 --among none --out $OUT/map/rest_large.json > $OUT/map/rest_large.log 2>&1
echo "map rest_large rc=$?"
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader
tail -5 $OUT/map/rest_large.log | cut -c1-200
