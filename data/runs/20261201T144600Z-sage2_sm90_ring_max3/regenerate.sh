#!/bin/bash
# Rebuilds sage2_ab.py, the harness this record's calls ran, from ../20261201T134000Z-sage2_sm90_pv_split_no_producer's
# and sage2_ab.diff. Run from this folder.
set -e
patch -s -o sage2_ab.py ../20261201T134000Z-sage2_sm90_pv_split_no_producer/sage2_ab.py < sage2_ab.diff
