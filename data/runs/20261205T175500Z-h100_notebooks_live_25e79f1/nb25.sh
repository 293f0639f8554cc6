#!/usr/bin/env bash
# notebooks 02 and 05 live at SHA (not recorded), then their printed lines
T0=$(date +%s); touch /tmp/start
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache
export LABKIT_GIT_SHA=$1 LABKIT_NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for nb in 02 05; do timeout 250 python3 -m labkit nb run $nb > $OUT/nb_$nb.log 2>&1; echo "nb $nb rc=$? at $(( $(date +%s) - T0 )) s" | tee -a $OUT/nb_$nb.log; done
python3 .dbg/nbscan.py | tee $OUT/nbscan.txt
tar czf $OUT/nb_executed.tgz $(find runs -newer /tmp/start -name "*.ipynb" ! -name "*.input.ipynb")
