#!/usr/bin/env bash
# bash .dbg/s99/first.sh <sha>: the launch-overhead probe (c3a3e09, never run on a GPU) on any card; then, on an H200
# only, .dbg/s98/h200_all.sh (#10's question 2). Carry .whl-all3, .dbg/s94, .dbg/s98, .dbg/s99.
R=$OUT
bash .dbg/s98/overhead.sh 2>&1 | tee $R/overhead.txt
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 || { echo "not an H200: map not run"; exit 0; }
mkdir -p /tmp/hall; OUT=/tmp/hall B1=${B1:-180} B2=${B2:-90} bash .dbg/s98/h200_all.sh "$1"
cp /tmp/hall/* $R/
