#!/bin/sh
# Rebuilds this record's A/B harness as it ran (.dbg/dec/dec_ml.py on the device): a diff against dec_ab_mrel.py of
# ../20261201T185000Z-decode_merge (rebuilt by its own regenerate.sh). Usage: sh regenerate.sh [DIR]; prints DIR.
set -e
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$(mktemp -d)}
prev=$(sh "$here/../20261201T185000Z-decode_merge/regenerate.sh")
patch -s -o "$out/dec_ab_ml_slot.py" "$prev/dec_ab_mrel.py" < "$here/dec_ab_ml_slot.diff"
echo "$out"
