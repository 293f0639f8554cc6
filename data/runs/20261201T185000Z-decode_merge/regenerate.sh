#!/bin/sh
# Rebuilds this record's A/B harness as it ran (.dbg/dec/dec_merge.py on the device): a diff against the harness of
# ../20261201T184500Z-decode_bounds (rebuilt by its own regenerate.sh), and dec_ab_mrel.py against it. Usage: sh regenerate.sh [DIR]; prints DIR.
set -e
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$(mktemp -d)}
prev=$(sh "$here/../20261201T184500Z-decode_bounds/regenerate.sh")
patch -s -o "$out/dec_ab_merge.py" "$prev/dec_bounds.py" < "$here/dec_ab_merge.diff"
patch -s -o "$out/dec_ab_mrel.py" "$out/dec_ab_merge.py" < "$here/dec_ab_mrel.diff"
echo "$out"
