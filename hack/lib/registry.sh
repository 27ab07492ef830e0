# The two loopback registries: open, and htpasswd-protected. Sourced.

registry_up() {
  mkdir -p "$ENV_DIR"/{pids,logs} "$REG_STORE"/{open,auth}
  [ -f "$ENV_DIR/htpasswd" ] || htpasswd -Bbc "$ENV_DIR/htpasswd" "$REG_USER" "$REG_PASS" 2>/dev/null
  local kind port
  for kind in open auth; do
    if pid_alive "$ENV_DIR/pids/registry-$kind.pid"; then continue; fi
    port=$REG_OPEN_PORT; [ $kind = auth ] && port=$REG_AUTH_PORT
    port_free "$port" || die "port $port (registry-$kind) is in use; set KRUISE_TS_PORT_OFFSET to move this environment"
    {
      printf 'version: 0.1\nlog: {level: warn, accesslog: {disabled: true}}\n'
      printf 'storage:\n  filesystem: {rootdirectory: %s}\n  delete: {enabled: true}\n' "$REG_STORE/$kind"
      printf '  maintenance: {uploadpurging: {enabled: false}}\nhttp:\n  addr: 127.0.0.1:%s\n' "$port"
      [ $kind = auth ] && printf 'auth:\n  htpasswd: {realm: kruise-ts, path: %s}\n' "$ENV_DIR/htpasswd"
    } > "$ENV_DIR/registry-$kind.yml"
    setsid docker-registry serve "$ENV_DIR/registry-$kind.yml" >"$ENV_DIR/logs/registry-$kind.log" 2>&1 </dev/null &
    echo $! > "$ENV_DIR/pids/registry-$kind.pid"
  done
  wait_for "registry $REG_OPEN" 20 curl -fsS "http://$REG_OPEN/v2/" || die "registry $REG_OPEN did not start: $(tail -5 "$ENV_DIR/logs/registry-open.log")"
  wait_for "registry $REG_AUTH (auth)" 20 sh -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' http://$REG_AUTH/v2/)\" = 401 ]" \
    || die "registry $REG_AUTH did not start: $(tail -5 "$ENV_DIR/logs/registry-auth.log")"
}

registry_down() {
  stop_pidfile "$ENV_DIR/pids/registry-open.pid" 5
  stop_pidfile "$ENV_DIR/pids/registry-auth.pid" 5
}
