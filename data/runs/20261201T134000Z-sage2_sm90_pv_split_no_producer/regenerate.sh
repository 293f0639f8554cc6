#!/bin/bash
# Rebuilds attn_fwd_sm90_x.cu, the variant source variants.py compiles (the kernel at 2193882 plus this record's
# switches), from that commit's kernel and attn_fwd_sm90_x.diff. Run from this folder in a labkit checkout.
set -e
ROOT=$(git rev-parse --show-toplevel)
git -C "$ROOT" show 2193882:labkit/workloads/sage2/kernels/attn_fwd_sm90.cu > attn_fwd_sm90_x.cu
patch -s attn_fwd_sm90_x.cu attn_fwd_sm90_x.diff
