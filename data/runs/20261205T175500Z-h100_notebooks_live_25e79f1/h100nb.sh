#!/usr/bin/env bash
# notebooks live at SHA, then scan their printed lines
bash .dbg/gpu_s.sh "$1" nb
python3 .dbg/nbscan.py | tee $OUT/nbscan.txt
