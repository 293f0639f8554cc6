#!/bin/sh
# Rebuilds this record's harness as it ran (.dbg/dec/dec_bound.py on the device): a diff against the harness of
# ../20261201T183900Z-decode_split_counter (rebuilt by its own regenerate.sh). Usage: sh regenerate.sh [DIR].
set -e
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$(mktemp -d)}
prev=$(sh "$here/../20261201T183900Z-decode_split_counter/regenerate.sh")
patch -s -o "$out/dec_bounds.py" "$prev/dec_ab_split_counter.py" < "$here/dec_bounds.diff"
echo "$out"
