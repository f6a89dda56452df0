#!/usr/bin/env bash
# Stop the jobs one profile's run left running (after a second Ctrl-C, Snakemake quits without stopping them), and
# only those: a job is a `python -m ead.*` process whose working directory is that profile's root, so another
# profile's run (runs/<other>/) on the same machine is never touched.
#   bash workflow/scripts/stop_jobs.sh            # the default profile (the checkout's root)
#   bash workflow/scripts/stop_jobs.sh smoke      # runs/smoke/
set -euo pipefail
cd "$(dirname "$0")/../.."
profile="${1:-default}"
root="$(pwd -P)"
[ "$profile" = default ] || root="$root/runs/$profile"
if [ ! -d "$root" ]; then
  echo "stop_jobs.sh: no profile root $root (profiles write under runs/<profile>/)" >&2
  exit 2
fi
stopped=0
for pid in $(pgrep -f "python[0-9.]* -m ead\." || true); do
  [ "$pid" = "$$" ] && continue
  cwd="$(readlink "/proc/$pid/cwd" 2>/dev/null || true)"
  if [ "$cwd" = "$root" ]; then
    echo "stop_jobs.sh: stopping $pid: $(tr '\0' ' ' < "/proc/$pid/cmdline" | cut -c1-120)"
    kill -TERM "$pid" 2>/dev/null && stopped=$((stopped + 1))
  fi
done
echo "stop_jobs.sh: stopped $stopped job(s) of profile '$profile' ($root)"
