#!/usr/bin/env bash
# The whole campaign, at low priority: every fuzz target with its input count, then the
# prefix-truncation sweep over real vocab files. Figures go to fuzz/work/summary.txt.
#   fuzz/campaign.sh            # 10^5 inputs per GGUF target, 10^4 per other target
#   RUNS_GGUF=1000 RUNS_OTHER=100 fuzz/campaign.sh   # a quick smoke run
set -uo pipefail
cd "$(dirname "$0")/.."
RUNS_GGUF="${RUNS_GGUF:-100000}"
RUNS_OTHER="${RUNS_OTHER:-10000}"
mkdir -p fuzz/work/logs
summary="${SUMMARY:-fuzz/work/summary.txt}"
: > "$summary"
for t in ${TARGETS:-gguf_mem gguf_split gguf_remote hub_api config_json tokenizer_json tokenizer_config_json tokenizer_model launch_cmd modelfile registry_toml}; do
  case "$t" in gguf_*) runs=$RUNS_GGUF ;; *) runs=$RUNS_OTHER ;; esac
  start=$(date +%s)
  nice -n 15 python fuzz/run.py "$t" -runs="$runs" > "fuzz/work/logs/$t.log" 2>&1
  rc=$?
  secs=$(( $(date +%s) - start ))
  done_line=$(grep -E '^Done [0-9]+ runs' "fuzz/work/logs/$t.log" | tail -1)
  rss=$(grep -E 'peak_rss_mb' "fuzz/work/logs/$t.log" | awk '{print $2}' | tail -1)
  crashes=$(ls fuzz/work/"$t"/ 2>/dev/null | grep -cE '^(crash|timeout|oom|leak)-')
  echo "$t rc=$rc wall=${secs}s ${done_line:-no Done line} peak_rss_mb=${rss:-?} artifacts=$crashes" | tee -a "$summary"
done
if [ -z "${TARGETS:-}" ]; then
  start=$(date +%s)
  nice -n 15 python fuzz/prefixes.py > fuzz/work/logs/prefixes.log 2>&1
  echo "prefixes rc=$? wall=$(( $(date +%s) - start ))s $(tail -1 fuzz/work/logs/prefixes.log)" | tee -a "$summary"
fi
