#!/usr/bin/env bash
# One private containerd of the environment: hack/containerd.sh up|down|stop|start|restart DIR
#   up/start  start it (config under DIR) unless it runs
#   stop      stop the containerd process only: tasks and shims keep running, as on a node
#             whose runtime restarts
#   restart   stop, then start
#   down      kill its tasks, stop it and remove DIR
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/env.sh"
source "$(dirname "$0")/lib/containerd.sh"
require_root "$@"
verb=${1:-}; dir=${2:-}
[ -n "$dir" ] || die "usage: $0 up|down|stop|start|restart DIR"
case "$verb" in
  up|start) containerd_up "$dir" ;;
  stop) stop_pidfile "$dir/pids/containerd.pid" 10 ;;
  restart) stop_pidfile "$dir/pids/containerd.pid" 10; containerd_up "$dir" ;;
  down) containerd_down "$dir" purge ;;
  *) die "unknown verb $verb" ;;
esac
