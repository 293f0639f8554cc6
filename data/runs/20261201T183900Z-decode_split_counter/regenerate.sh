#!/bin/sh
# Rebuilds this record's A/B harness as it ran (.dbg/dec/dec_rel.py on the device): a diff against the last
# harness of ../20261201T174500Z-decode_warp_pairs (rebuilt by its own regenerate.sh). Usage: sh regenerate.sh [DIR].
set -e
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$(mktemp -d)}
prev=$(sh "$here/../20261201T174500Z-decode_warp_pairs/regenerate.sh")
patch -s -o "$out/dec_ab_split_counter.py" "$prev/dec_ab_persistent.py" < "$here/dec_ab_split_counter.diff"
echo "$out"
