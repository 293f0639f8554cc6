# As run on the device (bash .dbg/run_pers2.sh <full sha>): the smem A/B, then ncu source counters of plan vs
# persistent at 64 x 8k and 256 x 1k d256. One tarball comes back.
R=/tmp/res; mkdir -p $R; trap 'tar -C /tmp/res -czf $OUT/res.tgz . ; cp /tmp/res/*.log $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl .whl_ncu/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1 R
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv
s=$(date +%s); timeout 150 python3 .dbg/pers/ab2.py > $R/ab2.log 2>&1 || echo "ab2 rc $?"; echo "ab2 $(( $(date +%s) - s )) s"; cat $R/ab2.log
s=$(date +%s); timeout 300 ncu --section SourceCounters --section SpeedOfLight --section MemoryWorkloadAnalysis --import-source yes -k paged_decode --cache-control none --clock-control none -o $R/prof python3 .dbg/pers/prof.py > $R/ncu.log 2>&1 || echo "ncu rc $?"; echo "ncu $(( $(date +%s) - s )) s"; tail -3 $R/ncu.log; ls -la $R
for a in 0 1 2 3 4 5 6 7 8 9 10 11; do python3 -m labkit ncu phases $R/prof.ncu-rep --source paged_decode_mma.cu --action $a 2>&1 | cut -c1-200; done > $R/phases.log; head -150 $R/phases.log
python3 -m labkit ncu show $R/prof.ncu-rep > $R/show.log 2>&1; cut -c1-250 $R/show.log
