#!/bin/bash
# Rebuilds the variant sources this record's calls compiled (attn_fwd_sm90_*.cu, next to variants.py) from the
# kernel at the commits they started from, the diffs kept here and ones_patch.py; and the harness (sage2_ab.py,
# variants.py) from the earlier records' copies and sage2_ab.diff / variants.diff. Run from this folder in a
# labkit checkout.
set -e
K=labkit/workloads/sage2/kernels/attn_fwd_sm90.cu
ROOT=$(git rev-parse --show-toplevel)
base() { git -C "$ROOT" show "$1:$K"; }
base f71d93b > attn_fwd_sm90_f.cu && patch -s attn_fwd_sm90_f.cu attn_fwd_sm90_f.diff
base f71d93b > attn_fwd_sm90_n.cu && patch -s attn_fwd_sm90_n.cu attn_fwd_sm90_n.diff
python3 ones_patch.py  # attn_fwd_sm90_fo.cu and attn_fwd_sm90_no.cu from the two above
cp attn_fwd_sm90_fo.cu attn_fwd_sm90_fod.cu && patch -s attn_fwd_sm90_fod.cu attn_fwd_sm90_fod.diff
base 9616cc1 > attn_fwd_sm90_d.cu && patch -s attn_fwd_sm90_d.cu attn_fwd_sm90_d.diff
base ef463c7 > attn_fwd_sm90_ps.cu && patch -s attn_fwd_sm90_ps.cu attn_fwd_sm90_ps.diff
patch -s -o sage2_ab.py ../20261201T134000Z-sage2_sm90_pv_split_no_producer/sage2_ab.py < sage2_ab.diff
patch -s -o variants.py ../20261201T144600Z-sage2_sm90_ring_max3/variants.py < variants.diff
