# The local cluster: etcd, kube-apiserver, kube-controller-manager, kube-scheduler and N kubelets,
# each kubelet on its own containerd. Sourced.

api() { # api METHOD PATH [JSON]: prints the HTTP code
  local data=(); [ $# -ge 3 ] && data=(-H 'Content-Type: application/json' -d "$3")
  curl -sS -o /dev/null -w '%{http_code}' --cacert "$KUBE_DIR/pki/ca.crt" -H "Authorization: Bearer $ADMIN_TOKEN" \
    -X "$1" "https://127.0.0.1:$APISERVER_PORT$2" "${data[@]}"
}

start_daemon() { # start_daemon NAME PIDFILE LOG CMD...: one setsid process, its own PID file
  local name=$1 pidf=$2 logf=$3; shift 3
  if pid_alive "$pidf"; then return 0; fi
  setsid "$@" >"$logf" 2>&1 </dev/null &
  echo $! > "$pidf"
}

fail_with_log() { tail -25 "$2" >&2; die "$1 did not become ready (log: $2)"; }

cluster_pki() {
  local p=$KUBE_DIR/pki
  mkdir -p "$p"
  if [ ! -f "$p/apiserver.crt" ]; then
    ( cd "$p"
      openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=kruise-ts-ca" -keyout ca.key -out ca.crt \
        -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
      openssl req -newkey rsa:2048 -nodes -subj "/CN=kube-apiserver" -keyout apiserver.key -out apiserver.csr 2>/dev/null
      printf 'subjectAltName=IP:127.0.0.1,IP:%s,IP:%s,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local\nextendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n' "$API_IP" "$KUBERNETES_SVC_IP" > apiserver.ext
      openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 -extfile apiserver.ext -out apiserver.crt 2>/dev/null
      printf 'extendedKeyUsage=clientAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n' > client.ext
      openssl req -newkey rsa:2048 -nodes -subj "/O=system:masters/CN=admin-cert" -keyout admin.key -out admin.csr 2>/dev/null
      openssl x509 -req -in admin.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 -extfile client.ext -out admin.crt 2>/dev/null
      openssl genrsa -out sa.key 2048 2>/dev/null
      openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
    )
  fi
  printf '%s,admin,admin-uid,"system:masters"\n%s,restricted-user,restricted-uid\n' "$ADMIN_TOKEN" "$RESTRICTED_TOKEN" > "$p/tokens.csv"
  local ca; ca=$(base64 -w0 < "$p/ca.crt")
  cat > "$KUBE_DIR/kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters:
- name: kruise-ts-$KRUISE_TS_ENV
  cluster:
    server: https://127.0.0.1:$APISERVER_PORT
    certificate-authority-data: $ca
users:
- name: admin
  user:
    token: $ADMIN_TOKEN
contexts:
- name: kruise-ts-$KRUISE_TS_ENV
  context: {cluster: kruise-ts-$KRUISE_TS_ENV, user: admin}
current-context: kruise-ts-$KRUISE_TS_ENV
KC
  sed -e "s/user: admin}/user: restricted-user}/" -e "s/^- name: admin$/- name: restricted-user/" \
      -e "s/token: $ADMIN_TOKEN/token: $RESTRICTED_TOKEN/" "$KUBE_DIR/kubeconfig" > "$KUBE_DIR/kubeconfig-restricted"
  cat > "$KUBE_DIR/kcm.kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters:
- name: kruise-ts
  cluster:
    server: https://127.0.0.1:$APISERVER_PORT
    certificate-authority: $p/ca.crt
users:
- name: kcm
  user:
    client-certificate: $p/admin.crt
    client-key: $p/admin.key
contexts:
- name: kcm
  context: {cluster: kruise-ts, user: kcm}
current-context: kcm
KC
  chmod 600 "$KUBE_DIR"/kubeconfig*
}

# network_up / network_down: this environment's addresses on the loopback interface, and the one
# Service pods here need routed, `kubernetes`, as kube-proxy would route it: only host-network pods
# run on these nodes, the API server reaches webhooks through Service endpoints on its own
# (--enable-aggregator-routing), so a single static rule replaces kube-proxy.
network_ips() { echo "$API_IP"; for i in $(seq 1 "$NODES"); do node_ip "$i"; done; }
# kubernetes_dnat -C|-A|-D: checks, adds or deletes the rule that routes the kubernetes Service.
kubernetes_dnat() { iptables -t nat "$1" OUTPUT -d "$KUBERNETES_SVC_IP/32" -p tcp --dport 443 -j DNAT --to-destination "$API_IP:$APISERVER_PORT"; }

network_up() {
  local ip
  for ip in $(network_ips); do
    ip -o addr show dev lo | grep -q " $ip/32 " || ip addr add "$ip/32" dev lo
  done
  kubernetes_dnat -C 2>/dev/null || kubernetes_dnat -A
}

network_down() {
  local ip
  kubernetes_dnat -D 2>/dev/null || true
  for ip in $(network_ips); do
    ip addr del "$ip/32" dev lo 2>/dev/null || true
  done
}

control_plane_up() {
  mkdir -p "$KUBE_DIR"/{logs,pids}
  network_up
  cluster_pki
  local p=$KUBE_DIR/pki
  if ! pid_alive "$KUBE_DIR/pids/etcd.pid"; then
    port_free "$ETCD_CLIENT_PORT" || die "port $ETCD_CLIENT_PORT (etcd) is in use; set KRUISE_TS_PORT_OFFSET"
    [ -d "$KUBE_DIR/etcd-data" ] || mkdir -m 700 "$KUBE_DIR/etcd-data"
    start_daemon etcd "$KUBE_DIR/pids/etcd.pid" "$KUBE_DIR/logs/etcd.log" etcd --name kruise-ts --data-dir "$KUBE_DIR/etcd-data" \
      --listen-client-urls "http://127.0.0.1:$ETCD_CLIENT_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_CLIENT_PORT" \
      --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
      --initial-cluster "kruise-ts=http://127.0.0.1:$ETCD_PEER_PORT" --initial-cluster-state new \
      --quota-backend-bytes 4294967296 --log-level warn
  fi
  WAIT_PIDFILE=$KUBE_DIR/pids/etcd.pid wait_for etcd 30 sh -c "curl -fsS http://127.0.0.1:$ETCD_CLIENT_PORT/health | grep -q '\"health\":\"true\"'" \
    || fail_with_log etcd "$KUBE_DIR/logs/etcd.log"
  if ! pid_alive "$KUBE_DIR/pids/kube-apiserver.pid"; then
    # What kruise-ts's pods call, by their ServiceAccounts, for check-rbac (hack/check-rbac.ts --audit).
    cat > "$KUBE_DIR/audit-policy.yaml" <<'YAML'
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  userGroups: ["system:serviceaccounts:kruise-ts-system"]
- level: None
YAML
    port_free "$APISERVER_PORT" || die "port $APISERVER_PORT (kube-apiserver) is in use; set KRUISE_TS_PORT_OFFSET"
    start_daemon kube-apiserver "$KUBE_DIR/pids/kube-apiserver.pid" "$KUBE_DIR/logs/kube-apiserver.log" \
      "$APISERVER_BIN" --etcd-servers "http://127.0.0.1:$ETCD_CLIENT_PORT" \
      --bind-address 0.0.0.0 --advertise-address "$API_IP" --secure-port "$APISERVER_PORT" --insecure-port 0 \
      --endpoint-reconciler-type none --cert-dir "$p" --tls-cert-file "$p/apiserver.crt" --tls-private-key-file "$p/apiserver.key" \
      --client-ca-file "$p/ca.crt" --token-auth-file "$p/tokens.csv" --authorization-mode "${KRUISE_TS_AUTHZ:-RBAC}" \
      --service-account-issuer https://kubernetes.default.svc.cluster.local \
      --service-account-key-file "$p/sa.pub" --service-account-signing-key-file "$p/sa.key" \
      --service-cluster-ip-range "$SERVICE_CIDR" --allow-privileged=true \
      --max-requests-inflight 3000 --max-mutating-requests-inflight 1000 --profiling=false --v 1 \
      --enable-aggregator-routing=true --kubelet-preferred-address-types InternalIP,Hostname \
      --kubelet-client-certificate "$p/admin.crt" --kubelet-client-key "$p/admin.key" \
      --audit-policy-file "$KUBE_DIR/audit-policy.yaml" --audit-log-path "$KUBE_DIR/logs/audit.log" --audit-log-maxsize 200
  fi
  WAIT_PIDFILE=$KUBE_DIR/pids/kube-apiserver.pid wait_for kube-apiserver 90 curl -fsS --cacert "$p/ca.crt" -H "Authorization: Bearer $ADMIN_TOKEN" \
    "https://127.0.0.1:$APISERVER_PORT/readyz" || fail_with_log kube-apiserver "$KUBE_DIR/logs/kube-apiserver.log"
  if ! pid_alive "$KUBE_DIR/pids/kube-controller-manager.pid"; then
    port_free "$KCM_PORT" || die "port $KCM_PORT (kube-controller-manager) is in use; set KRUISE_TS_PORT_OFFSET"
    start_daemon kube-controller-manager "$KUBE_DIR/pids/kube-controller-manager.pid" "$KUBE_DIR/logs/kube-controller-manager.log" \
      "$K8S_BIN_DIR/kube-controller-manager" --kubeconfig "$KUBE_DIR/kcm.kubeconfig" \
      --authentication-kubeconfig "$KUBE_DIR/kcm.kubeconfig" --authorization-kubeconfig "$KUBE_DIR/kcm.kubeconfig" \
      --authentication-skip-lookup=true --bind-address 127.0.0.1 --secure-port "$KCM_PORT" --port 0 --cert-dir "$p/kcm" \
      --leader-elect=false --controllers "$KCM_CONTROLLERS" --use-service-account-credentials=false \
      --service-account-private-key-file "$p/sa.key" --root-ca-file "$p/ca.crt" \
      --cluster-signing-cert-file "$p/ca.crt" --cluster-signing-key-file "$p/ca.key" \
      --service-cluster-ip-range "$SERVICE_CIDR" --profiling=false --v 1
  fi
  WAIT_PIDFILE=$KUBE_DIR/pids/kube-controller-manager.pid wait_for kube-controller-manager 60 curl -fsSk "https://127.0.0.1:$KCM_PORT/healthz" \
    || fail_with_log kube-controller-manager "$KUBE_DIR/logs/kube-controller-manager.log"
  # Since 1.8 the system:node binding has no subjects; the apiserver runs RBAC only.
  local code
  code=$(api POST /apis/rbac.authorization.k8s.io/v1/clusterrolebindings \
    '{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{"name":"kruise-ts:nodes"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"system:node"},"subjects":[{"apiGroup":"rbac.authorization.k8s.io","kind":"Group","name":"system:nodes"}]}')
  case "$code" in 201|409) ;; *) die "creating the system:nodes ClusterRoleBinding answered HTTP $code" ;; esac
  if ! pid_alive "$KUBE_DIR/pids/kube-scheduler.pid"; then
    port_free "$SCHED_PORT" || die "port $SCHED_PORT (kube-scheduler) is in use; set KRUISE_TS_PORT_OFFSET"
    start_daemon kube-scheduler "$KUBE_DIR/pids/kube-scheduler.pid" "$KUBE_DIR/logs/kube-scheduler.log" \
      "$K8S_BIN_DIR/kube-scheduler" --kubeconfig "$KUBE_DIR/kcm.kubeconfig" \
      --authentication-kubeconfig "$KUBE_DIR/kcm.kubeconfig" --authorization-kubeconfig "$KUBE_DIR/kcm.kubeconfig" \
      --leader-elect=false --bind-address 127.0.0.1 --secure-port "$SCHED_PORT" --port 0 --v 1
  fi
  WAIT_PIDFILE=$KUBE_DIR/pids/kube-scheduler.pid wait_for kube-scheduler 60 curl -fsSk "https://127.0.0.1:$SCHED_PORT/healthz" \
    || fail_with_log kube-scheduler "$KUBE_DIR/logs/kube-scheduler.log"
}

kubelet_running_on_host() {
  local f a0
  for f in /proc/[0-9]*/cmdline; do
    a0=$(head -z -n 1 "$f" 2>/dev/null | tr -d '\0')
    [ "${a0##*/}" = kubelet ] && return 0
  done
  return 1
}

cgroup_hierarchies() { # every v1 hierarchy, plus unified when asked
  local h
  for h in /sys/fs/cgroup/*/; do
    [ -f "$h/cgroup.procs" ] || continue
    [ "$h" = /sys/fs/cgroup/unified/ ] && [ "${1:-}" != with-unified ] && continue
    echo "${h%/}"
  done
}

kubelet_up() { # kubelet_up I
  local i=$1 name d root hz port
  name=$(node_name "$i"); d=$(node_dir "$i")/kubelet; root=$(cgroup_root "$i")
  port=$(kubelet_port "$i"); hz=$(kubelet_healthz_port "$i")
  mkdir -p "$d"/{root,pki,volume-plugins}
  if pid_alive "$d/kubelet.pid"; then return 0; fi
  port_free "$port" || die "port $port (kubelet $name) is in use; set KRUISE_TS_PORT_OFFSET"
  local p=$KUBE_DIR/pki
  if [ ! -f "$d/pki/node.crt" ]; then
    openssl req -newkey rsa:2048 -nodes -subj "/O=system:nodes/CN=system:node:$name" -keyout "$d/pki/node.key" -out "$d/pki/node.csr" 2>/dev/null
    openssl x509 -req -in "$d/pki/node.csr" -CA "$p/ca.crt" -CAkey "$p/ca.key" -CAcreateserial -days 3650 \
      -extfile "$p/client.ext" -out "$d/pki/node.crt" 2>/dev/null
  fi
  cat > "$d/kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters:
- name: kruise-ts
  cluster:
    server: https://127.0.0.1:$APISERVER_PORT
    certificate-authority: $p/ca.crt
users:
- name: $name
  user:
    client-certificate: $d/pki/node.crt
    client-key: $d/pki/node.key
contexts:
- name: $name
  context: {cluster: kruise-ts, user: $name}
current-context: $name
KC
  cat > "$d/config.yaml" <<CFG
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $(node_ip "$i")
port: $port
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $hz
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: "$p/ca.crt"}
authorization: {mode: AlwaysAllow}
cgroupDriver: cgroupfs
cgroupRoot: "/$root"
cgroupsPerQOS: true
failSwapOn: false
oomScoreAdj: 0
makeIPTablesUtilChains: false
evictionHard: {}
evictionPressureTransitionPeriod: 10s
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
volumePluginDir: "$d/volume-plugins"
clusterDomain: cluster.local
resolvConf: /etc/resolv.conf
serializeImagePulls: false
maxPods: 110
syncFrequency: 10s
nodeStatusUpdateFrequency: 5s
nodeStatusReportFrequency: 30s
runtimeRequestTimeout: 2m
CFG
  # A custom cgroupRoot must exist in every v1 hierarchy; a fresh cpuset cgroup starts empty.
  local h
  for h in $(cgroup_hierarchies); do
    mkdir -p "$h/$root"
    if [ -f "$h/$root/cpuset.cpus" ] && [ -z "$(cat "$h/$root/cpuset.cpus")" ]; then
      cat "$h/cpuset.cpus" > "$h/$root/cpuset.cpus"; cat "$h/cpuset.mems" > "$h/$root/cpuset.mems"
    fi
  done
  if [ ! -f "$SYSCTL_SAVE" ] && ! kubelet_running_on_host; then
    local k
    for k in vm/overcommit_memory vm/panic_on_oom kernel/panic kernel/panic_on_oops kernel/keys/root_maxkeys kernel/keys/root_maxbytes; do
      echo "$k $(cat "/proc/sys/$k")"
    done > "$SYSCTL_SAVE"
  fi
  [ -e "$ENV_DIR/var-lib-kubelet-existed" ] || { [ -d /var/lib/kubelet ] && echo yes || echo no; } > "$ENV_DIR/var-lib-kubelet-existed"
  start_daemon "kubelet $name" "$d/kubelet.pid" "$d/kubelet.log" "$K8S_BIN_DIR/kubelet" \
    --config="$d/config.yaml" --kubeconfig="$d/kubeconfig" --root-dir="$d/root" --cert-dir="$d/pki" \
    --hostname-override="$name" --node-ip="$(node_ip "$i")" --container-runtime=remote \
    --container-runtime-endpoint="unix://$(node_dir "$i")/ctrd/containerd.sock" \
    --pod-infra-container-image="$PAUSE_IMAGE" --register-node=true --v=1
}

node_ready() { # node_ready NAME
  curl -fsS --cacert "$KUBE_DIR/pki/ca.crt" -H "Authorization: Bearer $ADMIN_TOKEN" \
    "https://127.0.0.1:$APISERVER_PORT/api/v1/nodes/$1" 2>/dev/null \
    | jq -e '.status.conditions[] | select(.type=="Ready" and .status=="True")' >/dev/null
}

cluster_up() {
  local i
  for i in $(seq 1 "$NODES"); do containerd_up "$(node_dir "$i")/ctrd"; done
  control_plane_up
  for i in $(seq 1 "$NODES"); do kubelet_up "$i"; done
  for i in $(seq 1 "$NODES"); do
    local d; d=$(node_dir "$i")/kubelet
    WAIT_PIDFILE=$d/kubelet.pid wait_for "node $(node_name "$i") Ready" 120 node_ready "$(node_name "$i")" || fail_with_log "kubelet $(node_name "$i")" "$d/kubelet.log"
  done
}

kubelet_stop() { # only our kubelet: its command line names its own root dir
  local d=$1/kubelet
  if [ -f "$d/kubelet.pid" ] && ! tr '\0' ' ' < "/proc/$(cat "$d/kubelet.pid")/cmdline" 2>/dev/null | grep -q -- "--root-dir=$d/root"; then
    rm -f "$d/kubelet.pid"
  fi
  stop_pidfile "$d/kubelet.pid" 10
}

cluster_down() {
  local i d
  stop_pidfile "$KUBE_DIR/pids/kube-scheduler.pid" 10
  for i in $(seq 1 "$NODES"); do kubelet_stop "$(node_dir "$i")"; done
  for i in $(seq 1 "$NODES"); do containerd_down "$(node_dir "$i")/ctrd" purge; done
  local apiserver_up=no
  pid_alive "$KUBE_DIR/pids/kube-apiserver.pid" && apiserver_up=yes
  for i in $(seq 1 "$NODES"); do
    d=$(node_dir "$i")
    [ "$apiserver_up" = yes ] && api DELETE "/api/v1/nodes/$(node_name "$i")" >/dev/null || true
    unmount_under "$d"
    local h root; root=$(cgroup_root "$i")
    for h in $(cgroup_hierarchies with-unified); do
      [ -d "$h/$root" ] || continue
      find "$h/$root" -depth -mindepth 1 -type d -exec rmdir {} \; 2>/dev/null || true
      rmdir "$h/$root" 2>/dev/null || true
    done
    rm -rf "$d"
  done
  # Pod logs stay behind once the kubelets are gone. This environment's namespaces all start with
  # its name (test helpers and the demo name them so), which no other environment on the host uses.
  rm -rf /var/log/pods/"${KRUISE_TS_ENV}"-* 2>/dev/null || true
  find /var/log/containers -maxdepth 1 -name "*_${KRUISE_TS_ENV}-*.log" -delete 2>/dev/null || true
  if [ -f "$SYSCTL_SAVE" ] && ! kubelet_running_on_host; then
    local k v
    while read -r k v; do [ "$(cat "/proc/sys/$k")" = "$v" ] || echo "$v" > "/proc/sys/$k"; done < "$SYSCTL_SAVE"
    rm -f "$SYSCTL_SAVE"
    if [ "$(cat "$ENV_DIR/var-lib-kubelet-existed" 2>/dev/null)" = no ]; then
      rm -f /var/lib/kubelet/device-plugins/{kubelet.sock,DEPRECATION,kubelet_internal_checkpoint}
      rmdir /var/lib/kubelet/device-plugins /var/lib/kubelet 2>/dev/null || true
    fi
  fi
  stop_pidfile "$KUBE_DIR/pids/kube-controller-manager.pid" 10
  stop_pidfile "$KUBE_DIR/pids/kube-apiserver.pid" 10
  stop_pidfile "$KUBE_DIR/pids/etcd.pid" 10
  network_down
  rm -rf "$KUBE_DIR"
}
