# Start and stop one private containerd whose every path lives under one folder. Sourced.

# containerd_up DIR: writes DIR/config.toml and starts containerd on DIR/containerd.sock.
containerd_up() {
  local d=$1
  mkdir -p "$d"/{root,state,runc,opt,certs.d,cni/net.d,pids,logs,pod-logs}
  if pid_alive "$d/pids/containerd.pid"; then log "containerd already running on $d/containerd.sock"; return 0; fi
  local reg
  for reg in "$REG_OPEN" "$REG_AUTH"; do
    mkdir -p "$d/certs.d/$reg"
    cat > "$d/certs.d/$reg/hosts.toml" <<TOML
server = "http://$reg"
[host."http://$reg"]
  capabilities = ["pull", "resolve", "push"]
  skip_verify = true
TOML
  done
  # docker.io is mirrored by the local registry, so manifests written for real clusters
  # (image: busybox:1.36) work offline: the registry holds library/busybox:1.36 and friends.
  mkdir -p "$d/certs.d/docker.io"
  cat > "$d/certs.d/docker.io/hosts.toml" <<TOML
server = "https://registry-1.docker.io"
[host."http://$REG_OPEN"]
  capabilities = ["pull", "resolve"]
  skip_verify = true
TOML
  echo '{ "cniVersion": "0.4.0", "name": "kruise-ts-lo", "plugins": [ { "type": "loopback" } ] }' \
    > "$d/cni/net.d/99-loopback.conflist"
  cat > "$d/config.toml" <<TOML
version = 2
root  = "$d/root"
state = "$d/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
                    "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs",
                    "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]
[grpc]
  address = "$d/containerd.sock"
[ttrpc]
  address = "$d/containerd.sock.ttrpc"
[debug]
  address = ""
  level = "info"
[metrics]
  address = ""
[plugins]
  [plugins."io.containerd.internal.v1.opt"]
    path = "$d/opt"
  [plugins."io.containerd.grpc.v1.cri"]
    sandbox_image = "$PAUSE_IMAGE"
    max_concurrent_downloads = 3
    # root here lacks CAP_SYS_RESOURCE, so the sandbox's oom_score_adj of -998 would be refused.
    restrict_oom_score_adj = true
    [plugins."io.containerd.grpc.v1.cri".containerd]
      snapshotter = "overlayfs"
      default_runtime_name = "runc"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"
        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
          SystemdCgroup = false
          Root = "$d/runc"
    [plugins."io.containerd.grpc.v1.cri".cni]
      bin_dir  = "/usr/lib/cni"
      conf_dir = "$d/cni/net.d"
    [plugins."io.containerd.grpc.v1.cri".registry]
      config_path = "$d/certs.d"
TOML
  setsid containerd --config "$d/config.toml" >"$d/logs/containerd.log" 2>&1 </dev/null &
  echo $! > "$d/pids/containerd.pid"
  if ! wait_for "containerd $d/containerd.sock" 20 ctr --address "$d/containerd.sock" version; then
    tail -20 "$d/logs/containerd.log" >&2
    die "containerd on $d did not become ready"
  fi
}

# containerd_down DIR [purge]: kills our tasks through our socket, then containerd, then unmounts.
containerd_down() {
  local d=$1 purge=${2:-}
  [ -d "$d" ] || return 0
  local sock="$d/containerd.sock"
  if pid_alive "$d/pids/containerd.pid" && [ -S "$sock" ]; then
    local ns id
    for ns in $(ctr --address "$sock" namespaces ls -q 2>/dev/null); do
      for id in $(ctr --address "$sock" -n "$ns" tasks ls -q 2>/dev/null); do
        ctr --address "$sock" -n "$ns" tasks kill -s SIGKILL "$id" >/dev/null 2>&1 || true
      done
    done
    sleep 0.5
    for ns in $(ctr --address "$sock" namespaces ls -q 2>/dev/null); do
      for id in $(ctr --address "$sock" -n "$ns" tasks ls -q 2>/dev/null); do
        ctr --address "$sock" -n "$ns" tasks delete -f "$id" >/dev/null 2>&1 || true
      done
    done
  fi
  # Shims outlive containerd; ours carry our socket in their command line.
  local p
  for p in /proc/[0-9]*; do
    # A process may be gone by the time it is read: the redirection's error is the shell's, hence { }.
    if { tr '\0' ' ' < "$p/cmdline"; } 2>/dev/null | grep -q -- "containerd-shim-runc-v2 .*-address $sock "; then
      kill -KILL "${p#/proc/}" 2>/dev/null || true
    fi
  done
  stop_pidfile "$d/pids/containerd.pid" 5
  unmount_under "$d"
  if [ "$purge" = purge ]; then
    if grep -q " $d/" /proc/mounts; then log "WARNING: mounts remain under $d; not removing it"; return 0; fi
    rm -rf "$d"
    rmdir /run/containerd/s /run/containerd/runc/k8s.io /run/containerd/runc /run/containerd 2>/dev/null || true
    local h
    for h in /sys/fs/cgroup/*/k8s.io; do rmdir "$h" 2>/dev/null || true; done
  fi
}

# unmount_under DIR: lazily unmounts everything below DIR, deepest first.
unmount_under() {
  local d=$1 m
  awk -v d="$d/" 'index($2, d) == 1 { print $2 }' /proc/mounts | sort -r | while read -r m; do
    umount -l "$m" 2>/dev/null || true
  done
}
