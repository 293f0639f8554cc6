#!/usr/bin/env bash
# bash .dbg/s98/h200_all.sh <sha>: on an H200 only (else print the card and stop), .dbg/s94's phase 1 (the peer map's
# calls behind at a0cd66e, with 95 % intervals, then the bench sweep beside the peers) and phase 2 (the map's other
# calls), each under its own budget; everything tarred into one file. Carry .whl-all3, .dbg/s94 and .dbg/s98.
nvidia-smi --query-gpu=name,uuid --format=csv,noheader
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 || { echo "not an H200: nothing run"; exit 0; }
R=$OUT; mkdir -p /tmp/o1 /tmp/o2
OUT=/tmp/o1 BUDGET=${B1:-190} bash .dbg/s94/run.sh "$1" 1
OUT=/tmp/o2 BUDGET=${B2:-90} bash .dbg/s94/run.sh "$1" 2
cat /tmp/o1/summary.txt /tmp/o2/summary.txt > $R/summary.txt
tar -C /tmp -czf $R/h200_all.tgz o1 o2
