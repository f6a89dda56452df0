#!/usr/bin/env bash
# A one-node SLURM cluster on this machine, for running the workflow's jobs as real SLURM jobs (docs/cluster.md).
#   bash workflow/scripts/slurm_local.sh install  # apt-get install slurm-wlm + munge (root; setup.sh --tests runs it)
#   bash workflow/scripts/slurm_local.sh start    # configure and start the daemons
#   eval "$(bash workflow/scripts/slurm_local.sh env)"   # point this shell's SLURM commands (and its jobs') at it
#   bash workflow/scripts/slurm_local.sh status   # daemons, node and queue
#   bash workflow/scripts/slurm_local.sh stop     # cancel jobs, wait for an empty queue, stop what `start` started
# `start` needs root (slurmd runs jobs as their users) and the packages; it never installs them. Everything the
# cluster writes lives under its state directory $SLURM_LOCAL_DIR (default: .slurm-local in the repository): the
# cluster config (slurm.conf; SLURM's daemons find it through SLURM_CONF, its commands through wrappers in bin/ that
# set it, which `env` puts first on PATH), munge's
# key, socket, seed and log, the daemons' pid files, logs, state and spool. Nothing under /etc, /run or /var is
# written. No systemd, cgroups or slurmdbd: munged, slurmctld and slurmd run as plain daemons. Partitions `cpu`
# (default) and `gpu` both hold this node, which has no GPUs: use the local workflow profile
# (workflow/profiles/slurm_local), which requests none.
# Without slurmdbd there is no accounting, so `sacct` fails: Snakemake's SLURM plugin must poll with squeue
# (slurm-status-command: squeue in the profile) and finished jobs stay visible to squeue for MinJobAge seconds, which
# must stay >= 3 x the profile's slurm-init-seconds-before-status-checks (else the plugin falls back to sacct and
# loses the job without an error).
set -euo pipefail

REPO=$(cd "$(dirname "$0")/../.." && pwd)
BASE=${SLURM_LOCAL_DIR:-$REPO/.slurm-local}
mkdir -p "$BASE"
BASE=$(cd "$BASE" && pwd)                             # absolute: slurm.conf and SLURM_CONF name it
CONF=$BASE/slurm.conf
MUNGE=$BASE/munge                                     # munged's key, socket, pid, seed and log
export SLURM_CONF=$CONF                               # every SLURM command below reads this cluster's config
NODE=$(hostname -s)                                   # slurmd registers under this name
MIN_JOB_AGE=300                                       # seconds; >= 3 x the local profile's 5-s first poll delay
NICE=${SLURM_LOCAL_NICE:-0}                           # niceness of the daemons (jobs inherit slurmd's)

say() { printf 'slurm_local: %s\n' "$*"; }
die() { printf 'slurm_local: error: %s\n' "$*" >&2; exit 1; }

alive() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

PACKAGES="slurm-wlm munge"

installed() {
  command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v munged >/dev/null \
    && command -v mungekey >/dev/null && command -v sbatch >/dev/null
}

do_install() {  # the only step that changes the system: Debian's packages (setup.sh --tests calls it)
  if installed; then
    say "$PACKAGES already installed"
    return
  fi
  local command="apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y $PACKAGES"
  if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
    say "not installed: $PACKAGES. As root on Debian/Ubuntu: $command"
    return 3
  fi
  say "installing $PACKAGES (apt-get; Debian 12 ships SLURM 22.05)"
  export DEBIAN_FRONTEND=noninteractive
  # without an init system the packages' postinst prints "policy-rc.d denied execution of start": expected
  apt-get update -q >/dev/null
  apt-get install -y -q $PACKAGES >/dev/null
  installed || die "apt-get installed $PACKAGES but slurmctld, slurmd, munged, mungekey or sbatch is not on PATH"
}

write_config() {
  local cpus mem_mb
  cpus=$(nproc)
  mem_mb=$(awk '/^MemTotal/{print int($2 / 1024 * 0.9)}' /proc/meminfo)  # leave the system a tenth
  mkdir -p "$BASE/state" "$BASE/spool" "$BASE/log"
  chown slurm:slurm "$BASE/state" "$BASE/log"        # slurmctld runs as SlurmUser=slurm
  # SLURM reads gres.conf, cgroup.conf and plugstack.conf beside slurm.conf: none here (no GPUs, no cgroups)
  cat > "$CONF.tmp" <<EOF
# written by ead workflow/scripts/slurm_local.sh (node $NODE, $cpus CPUs, $mem_mb MB)
ClusterName=ead-local
SlurmctldHost=$NODE(127.0.0.1)
SlurmUser=slurm
SlurmdUser=root
AuthType=auth/munge
CryptoType=crypto/munge
# munged of this cluster (its own key and socket), for the daemons and every client that reads SLURM_CONF
AuthInfo=socket=$MUNGE/munge.socket
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
  write_client_wrappers
}

# The SLURM commands, as wrappers in $BASE/bin that point them at this cluster's config. SLURM_CONF alone is not
# enough: inside a job, Snakemake's slurm-jobstep executor drops every SLURM_* variable before its nested `srun`
# (snakemake_executor_plugin_slurm_jobstep), which then looks for /etc/slurm/slurm.conf. PATH survives.
CLIENT_COMMANDS="srun sbatch squeue scancel scontrol sinfo sacct salloc"

real_command() {  # the first $1 on PATH that is not one of our wrappers
  local dir
  local IFS=:
  for dir in $PATH; do
    [ "$dir" != "$BASE/bin" ] && [ -x "$dir/$1" ] && { echo "$dir/$1"; return 0; }
  done
  return 1
}

write_client_wrappers() {
  local command real
  mkdir -p "$BASE/bin"
  for command in $CLIENT_COMMANDS; do
    real=$(real_command "$command") || continue
    printf '#!/bin/sh\n# written by ead workflow/scripts/slurm_local.sh: %s of the local cluster\nexport SLURM_CONF=%s\nexec %s "$@"\n' \
      "$command" "$CONF" "$real" > "$BASE/bin/$command"
    chmod 0755 "$BASE/bin/$command"
  done
}

munge_running() { munge --socket="$MUNGE/munge.socket" -n 2>/dev/null \
                   | unmunge --socket="$MUNGE/munge.socket" >/dev/null 2>&1; }

start_munge() {  # a munged of our own: key, socket, pid, seed and log under $MUNGE, run as the munge user
  munge_running && return
  install -d -o munge -g munge -m 0755 "$MUNGE"
  [ -s "$MUNGE/munge.key" ] || runuser -u munge -- mungekey --create --keyfile="$MUNGE/munge.key"
  chmod 0600 "$MUNGE/munge.key"
  runuser -u munge -- /usr/sbin/munged --socket="$MUNGE/munge.socket" --key-file="$MUNGE/munge.key" \
    --pid-file="$MUNGE/munged.pid" --seed-file="$MUNGE/munged.seed" --log-file="$MUNGE/munged.log"  # forks
  munge_running || die "munged started but does not answer (see $MUNGE/munged.log)"
}

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

do_start() {
  [ "$(id -u)" -eq 0 ] || die "start needs root (slurmd runs jobs as their users)"
  installed || die "SLURM is not installed ($PACKAGES): run 'bash workflow/scripts/slurm_local.sh install' as root"
  if alive "$BASE/slurmctld.pid" && alive "$BASE/slurmd.pid"; then
    say "already running (slurmctld pid $(cat "$BASE/slurmctld.pid"), slurmd pid $(cat "$BASE/slurmd.pid"))"
    return
  fi
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
      "partitions cpu (default) and gpu; logs in $BASE/log; for its commands and jobs:" \
      "export SLURM_CONF=$CONF PATH=$BASE/bin:\$PATH"
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
  stop_pid_file munged "$MUNGE/munged.pid"
}

do_status() {
  local name file running=0
  for name in munged slurmctld slurmd; do
    file="$BASE/$name.pid"
    [ "$name" = munged ] && file="$MUNGE/munged.pid"
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
  install) do_install ;;
  env) echo "export SLURM_CONF=$CONF PATH=$BASE/bin:\$PATH" ;;
  start) do_start ;;
  stop) do_stop ;;
  status) do_status ;;
  *) echo "usage: bash $0 install|start|env|status|stop" >&2; exit 2 ;;
esac
