#!/usr/bin/env bash
# A one-node SLURM cluster on this machine, for running the workflow's jobs as real SLURM jobs (docs/cluster.md).
#   bash workflow/scripts/slurm_local.sh start    # install slurm-wlm + munge (Debian) if missing, configure, start
#   bash workflow/scripts/slurm_local.sh status   # daemons, node and queue
#   bash workflow/scripts/slurm_local.sh stop     # cancel jobs, wait for an empty queue, stop what `start` started
# Needs root and Debian/Ubuntu (apt-get). No systemd, cgroups or slurmdbd: munged, slurmctld and slurmd run as plain
# daemons with pid files under $SLURM_LOCAL_DIR (default: .slurm-local in the repository). The cluster config goes to
# /etc/slurm/slurm.conf (the path every SLURM command reads); an existing config this script did not write is never
# overwritten. Partitions `cpu` (default) and `gpu` both hold this node, which has no GPUs: use the local workflow
# profile (workflow/profiles/slurm_local), which requests none.
# Without slurmdbd there is no accounting, so `sacct` fails: Snakemake's SLURM plugin must poll with squeue
# (slurm-status-command: squeue in the profile) and finished jobs stay visible to squeue for MinJobAge seconds, which
# must stay >= 3 x the profile's slurm-init-seconds-before-status-checks (else the plugin falls back to sacct and
# loses the job without an error).
set -euo pipefail

REPO=$(cd "$(dirname "$0")/../.." && pwd)
BASE=${SLURM_LOCAL_DIR:-$REPO/.slurm-local}
CONF=/etc/slurm/slurm.conf
MARKER="# written by ead workflow/scripts/slurm_local.sh"
NODE=$(hostname -s)                                   # slurmd registers under this name
MIN_JOB_AGE=300                                       # seconds; >= 3 x the local profile's 5-s first poll delay
NICE=${SLURM_LOCAL_NICE:-0}                           # niceness of the daemons (jobs inherit slurmd's)

say() { printf 'slurm_local: %s\n' "$*"; }
die() { printf 'slurm_local: error: %s\n' "$*" >&2; exit 1; }

alive() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

install_packages() {
  if command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v munged >/dev/null \
      && command -v sbatch >/dev/null; then
    return
  fi
  [ "$(id -u)" -eq 0 ] || die "slurm-wlm and munge are not installed and installing them needs root"
  command -v apt-get >/dev/null || die "slurm-wlm and munge are not installed and there is no apt-get to install them"
  say "installing slurm-wlm and munge (apt-get)"
  export DEBIAN_FRONTEND=noninteractive
  # without an init system the packages' postinst prints "policy-rc.d denied execution of start": expected
  apt-get update -q >/dev/null
  apt-get install -y -q slurm-wlm munge >/dev/null
  command -v slurmctld >/dev/null || die "apt-get installed slurm-wlm but slurmctld is not on PATH"
}

write_config() {
  if [ -e "$CONF" ] && ! grep -qF "$MARKER" "$CONF"; then
    die "$CONF exists and was not written by this script: refusing to replace a real cluster's config"
  fi
  local cpus mem_mb
  cpus=$(nproc)
  mem_mb=$(awk '/^MemTotal/{print int($2 / 1024 * 0.9)}' /proc/meminfo)  # leave the system a tenth
  mkdir -p "$BASE/state" "$BASE/spool" "$BASE/log" /etc/slurm
  chown slurm:slurm "$BASE/state" "$BASE/log"        # slurmctld runs as SlurmUser=slurm
  rm -f /etc/slurm/gres.conf                           # no GPUs on this node (a leftover gres.conf would drain it)
  cat > "$CONF.tmp" <<EOF
$MARKER (node $NODE, $cpus CPUs, $mem_mb MB)
ClusterName=ead-local
SlurmctldHost=$NODE(127.0.0.1)
SlurmUser=slurm
SlurmdUser=root
AuthType=auth/munge
CryptoType=crypto/munge
MpiDefault=none
# no cgroups: plain process tracking, no task binding
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
# a job without --mem would otherwise take the whole node's memory and run alone
DefMemPerCPU=1000
# reject requests the node cannot satisfy at submission (else e.g. -c 64 pends forever)
EnforcePartLimits=ALL
ReturnToService=2
StateSaveLocation=$BASE/state
SlurmdSpoolDir=$BASE/spool
SlurmctldPidFile=$BASE/slurmctld.pid
SlurmdPidFile=$BASE/slurmd.pid
SlurmctldLogFile=$BASE/log/slurmctld.log
SlurmdLogFile=$BASE/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
# no slurmdbd: no accounting (sacct fails; poll with squeue)
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
# finished jobs stay visible to squeue this long (>= 3 x the profile's slurm-init-seconds-before-status-checks)
MinJobAge=$MIN_JOB_AGE
KillWait=10
InactiveLimit=0
Waittime=0
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=cpu Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
PartitionName=gpu Nodes=$NODE Default=NO MaxTime=INFINITE State=UP
EOF
  mv "$CONF.tmp" "$CONF"
}

start_munge() {
  if munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
    return                                             # a munged answers already: use it, never stop it
  fi
  [ -s /etc/munge/munge.key ] || mungekey --create --keyfile=/etc/munge/munge.key
  chown munge:munge /etc/munge/munge.key
  chmod 0600 /etc/munge/munge.key
  install -d -o munge -g munge -m 0755 /run/munge
  runuser -u munge -- /usr/sbin/munged                 # forks; pid file /run/munge/munged.pid
  cp /run/munge/munged.pid "$BASE/munged.pid"          # ours to stop
  munge -n | unmunge >/dev/null || die "munged started but does not answer (see /var/log/munge/munged.log)"
}

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

do_start() {
  [ "$(id -u)" -eq 0 ] || die "start needs root (slurmd runs jobs as their users)"
  if alive "$BASE/slurmctld.pid" && alive "$BASE/slurmd.pid"; then
    say "already running (slurmctld pid $(cat "$BASE/slurmctld.pid"), slurmd pid $(cat "$BASE/slurmd.pid"))"
    return
  fi
  install_packages
  mkdir -p "$BASE"
  alive "$BASE/slurmctld.pid" || { port_free 6817 || die "port 6817 (slurmctld) is taken by another process"; }
  alive "$BASE/slurmd.pid" || { port_free 6818 || die "port 6818 (slurmd) is taken by another process"; }
  write_config
  start_munge
  # -c: a clean controller state (no jobs or node states left from an earlier run)
  alive "$BASE/slurmctld.pid" || nice -n "$NICE" /usr/sbin/slurmctld -c
  alive "$BASE/slurmd.pid" || nice -n "$NICE" /usr/sbin/slurmd
  local state=""
  for _ in $(seq 1 60); do
    state=$(sinfo -h -n "$NODE" -o %T 2>/dev/null | head -1 || true)
    [ "$state" = idle ] && break
    sleep 0.5
  done
  if [ "$state" != idle ]; then
    scontrol update nodename="$NODE" state=resume 2>/dev/null || true
    sleep 1
    state=$(sinfo -h -n "$NODE" -o %T 2>/dev/null | head -1 || true)
  fi
  [ "$state" = idle ] || die "node $NODE is '${state:-unknown}', not idle: see $BASE/log/slurmctld.log, slurmd.log"
  say "running: slurmctld pid $(cat "$BASE/slurmctld.pid"), slurmd pid $(cat "$BASE/slurmd.pid"), node $NODE idle," \
      "partitions cpu (default) and gpu; logs in $BASE/log"
}

stop_pid_file() {  # name pid-file: TERM the process, wait for it to end, remove its pid file
  local pid
  if alive "$2"; then
    pid=$(cat "$2")
    kill "$pid"
    for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    kill -0 "$pid" 2>/dev/null && { kill -9 "$pid" 2>/dev/null || true; }
    say "stopped $1 (pid $pid)"
  fi
  rm -f "$2"
}

do_stop() {
  if alive "$BASE/slurmctld.pid"; then
    # jobs first: a running job's slurmstepd outlives slurmd. A suspended job's processes are stopped (SIGSTOP) and
    # would never see scancel's SIGTERM: resume them first; a job still there after 60 s gets SIGKILL.
    local job left=""
    for job in $(squeue -h -t S -o %i 2>/dev/null || true); do scontrol resume "$job" 2>/dev/null || true; done
    scancel --state=PENDING,RUNNING,SUSPENDED 2>/dev/null || true
    for attempt in 1 2; do
      for _ in $(seq 1 60); do
        left=$(squeue -h -t PD,R,CG,S 2>/dev/null || true)
        [ -z "$left" ] && break
        sleep 1
      done
      [ -z "$left" ] && break
      [ "$attempt" -eq 1 ] && scancel --full --signal=KILL --state=RUNNING,SUSPENDED 2>/dev/null || true
    done
    [ -z "$left" ] || say "warning: jobs still in the queue after SIGKILL: $left"
  fi
  stop_pid_file slurmd "$BASE/slurmd.pid"
  stop_pid_file slurmctld "$BASE/slurmctld.pid"
  if [ -s "$BASE/munged.pid" ]; then
    if [ "$(cat "$BASE/munged.pid")" = "$(cat /run/munge/munged.pid 2>/dev/null)" ]; then
      stop_pid_file munged "$BASE/munged.pid"
    else
      rm -f "$BASE/munged.pid"                         # a munged restarted by someone else: not ours
    fi
  fi
}

do_status() {
  local name file running=0
  for name in munged slurmctld slurmd; do
    file="$BASE/$name.pid"
    if alive "$file"; then
      say "$name running (pid $(cat "$file"))"
      [ "$name" = munged ] || running=$((running + 1))
    else
      say "$name not running (started by this script)"
    fi
  done
  [ "$running" -eq 2 ] || return 3
  sinfo -o "%P %a %D %T %N %c %m"
  squeue
}

case "${1:-}" in
  start) do_start ;;
  stop) do_stop ;;
  status) do_status ;;
  *) echo "usage: bash $0 start|stop|status" >&2; exit 2 ;;
esac
