R=$OUT; nvidia-smi --query-gpu=name,uuid --format=csv > $R/smi.csv
timeout 200 ncu --nvtx --nvtx-include "regex:cudnn_.*/" --section LaunchStats --section Occupancy --section SpeedOfLight --cache-control all --clock-control none python3 .dbg/s52/cudnn_cfg.py > $R/cudnn_ncu.log 2>&1 || echo "ncu rc $?"
grep -E "cudnn_generated|lean_reduction|Grid Size|Registers Per|Dynamic Shared|Duration|Waves Per SM" $R/cudnn_ncu.log | cut -c1-200
