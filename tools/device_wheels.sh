#!/usr/bin/env bash
# Download, here (where pip reaches a registry), the wheels a registry-less GPU host needs to run labkit's notebooks,
# for its Python 3.12 on x86-64. Usage, from the repo root:
#   bash tools/device_wheels.sh DIR [ncu] [fa3] [NAME==VERSION ...]
# DIR gets the notebook set (papermill, ipykernel, nbformat, nvtx, ...: the pinned list in $LABKIT_NOTEBOOK_WHEELS,
# default ../shared/device/notebook-wheels.txt; jupytext, which that list lacks, is added), plus with `ncu` the
# .ncu-rep reader (notebook 05, labkit ncu) and with `fa3` FlashAttention-3 and einops (the FA3 peer). Keep DIR out of
# git (.git/info/exclude) and name it in the device tool's carry; tools/device_check.sh installs it. A carry holds
# 64 MiB with the tree, which counts about 30 MiB as it travels (7,600 files): the notebook set is 17 MB, ncu-report
# 15 MB, fa3-fwd's wheel 28 MB; so `fa3` leaves the wheel's contents as an xz tarball (9 MB: its 105 MB library
# compresses 3x better than the wheel's zip does), which tools/device_check.sh unpacks beside the wheels.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: bash tools/device_wheels.sh DIR [ncu] [fa3] [NAME==VERSION ...]" >&2; exit 2; }
dir=$1; shift
list=${LABKIT_NOTEBOOK_WHEELS:-../shared/device/notebook-wheels.txt}
[ -r "$list" ] || { echo "device_wheels: no notebook wheel list at $list (set LABKIT_NOTEBOOK_WHEELS)" >&2; exit 2; }
pins=$(dirname "$0")/../requirements.txt  # labkit's own pins, where it has them
pin() { grep -m1 -i "^$1==" "$pins" || { echo "device_wheels: no $1 pin in $pins" >&2; exit 2; }; }
jupytext=$(pin jupytext); ncu_report=$(pin ncu-report)  # ncu-report: the version of the device's ncu
specs=()
while read -r spec; do [ -n "$spec" ] && specs+=("$spec"); done < <(grep -v '^#' "$list")
# labkit nb runs a notebook from its jupytext .py source; the image has its other needs (markdown-it-py, pyyaml)
specs+=("$jupytext" "mdit-py-plugins==0.7.0")
for arg in "$@"; do
  case $arg in
    ncu) specs+=("$ncu_report") ;;
    fa3) specs+=("fa3-fwd==0.0.3" "einops==0.8.2") ;;
    *==*) specs+=("$arg") ;;
    *) echo "device_wheels: '$arg' is neither ncu, fa3 nor NAME==VERSION" >&2; exit 2 ;;
  esac
done
# pip matches a manylinux_2_N tag only when N is named: ncu-report is 2_25, fa3-fwd 2_24, which the usual list misses.
plat=(--platform manylinux2014_x86_64 --platform manylinux1_x86_64 --platform any)
for n in 17 24 25 27 28 31 34 35; do plat+=(--platform "manylinux_2_${n}_x86_64"); done
mkdir -p "$dir"
for spec in "${specs[@]}"; do
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp "${plat[@]}" \
    -d "$dir" "$spec" 2>&1 | grep -v '^WARNING: Location' || true
  name=${spec%%==*}
  ls "$dir" | grep -qi "^${name//-/_}-" || { echo "device_wheels: no wheel for $spec" >&2; exit 1; }
done
for wheel in "$dir"/fa3_fwd-*.whl; do  # the FA3 wheel as an xz tarball of what it installs
  [ -e "$wheel" ] || continue
  packed=${wheel%-cp*}.tar.xz  # the file name's tags off, not the path's (a DIR named x-cpu)
  tmp=$(mktemp -d)
  { unzip -q "$wheel" -d "$tmp" && tar -C "$tmp" -cf - . | xz -T0 -9 > "$packed"; } \
    || { rm -rf "$tmp" "$packed"; echo "device_wheels: could not pack $wheel" >&2; exit 1; }
  rm -rf "$tmp" "$wheel"
done
du -sh "$dir"
