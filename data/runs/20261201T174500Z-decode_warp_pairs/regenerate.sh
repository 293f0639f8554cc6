#!/bin/sh
# Rebuilds this record's A/B harness scripts as they ran: each is kept as a diff against the one before it (the
# first against ../20261201T170500Z-decode_cold_anatomy/dec_ab.py). Usage: sh regenerate.sh [DIR]; prints DIR.
set -e
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$(mktemp -d)}
prev=$here/../20261201T170500Z-decode_cold_anatomy/dec_ab.py
for name in l2_prefetch deep_stages null pairs pair_stages min_ctas2 persistent; do
    patch -s -o "$out/dec_ab_$name.py" "$prev" < "$here/dec_ab_$name.diff"
    prev=$out/dec_ab_$name.py
done
echo "$out"
