#!/usr/bin/env bash
# bash .dbg/s88/go.sh <full sha>, carry .whl-all3 and .dbg/s88. On an H200: every notebook live and recorded with FA3
# (nb_all.sh). On an H100: the manifest and decode GPU tests at main's HEAD (final.sh); a second call on the same warm
# machine runs the other half.
nvidia-smi --query-gpu=name,uuid --format=csv,noheader | tee $OUT/gpu.txt
if grep -q H200 $OUT/gpu.txt && [ "${2:-nb}" = nb ]; then MANIFEST_BY=0 bash .dbg/s88/nb_all.sh "$1"
else bash .dbg/s88/final.sh "$1"; fi
