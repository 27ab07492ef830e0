# Shared helpers for hack/ scripts. Sourced, never executed.
set -euo pipefail
export PATH="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:${PATH}"

log() { printf '[%s] %s\n' "$(basename "$0")" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

require_root() {
  if [ "$(id -u)" != 0 ]; then
    die "must run as root: it installs Debian packages and starts containerd/kubelet (try: sudo $0 $*)"
  fi
}

# A deb-src entry is needed for `apt-get source` (kubernetes, containerd); bookworm has none by default.
ensure_deb_src() {
  if grep -rqs '^Types:.*deb-src\|^deb-src' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null; then
    return 0
  fi
  log "adding a deb-src entry for bookworm"
  cat > /etc/apt/sources.list.d/kruise-ts-debian-src.sources <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  APT_UPDATED=""
}

APT_UPDATED="${APT_UPDATED:-}"
# apt_install PKG... installs only the packages that are missing, under a lock so parallel scripts don't race.
apt_install() {
  local missing=()
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ "${#missing[@]}" -eq 0 ] && return 0
  log "installing Debian packages: ${missing[*]}"
  (
    flock 9
    if [ -z "$APT_UPDATED" ]; then apt-get update -qq; fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  ) 9>/tmp/kruise-ts-apt.lock
  APT_UPDATED=1
}

# wait_for DESC TIMEOUT_S CMD... polls CMD every 100 ms. With WAIT_PIDFILE set, gives up as soon
# as that process has died.
wait_for() {
  local desc=$1 timeout=$2; shift 2
  local deadline=$(( $(date +%s) + timeout ))
  until "$@" >/dev/null 2>&1; do
    if [ "$(date +%s)" -ge "$deadline" ]; then return 1; fi
    if [ -n "${WAIT_PIDFILE:-}" ] && ! pid_alive "$WAIT_PIDFILE"; then log "$desc exited"; return 1; fi
    sleep 0.1
  done
  log "$desc ready"
}

pid_alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

# stop_pidfile FILE [GRACE_S]: TERM, wait, KILL. Only the PID we recorded.
stop_pidfile() {
  local f=$1 grace=${2:-5}
  [ -f "$f" ] || return 0
  local pid; pid=$(cat "$f")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    local i=0
    while kill -0 "$pid" 2>/dev/null && [ $i -lt $((grace * 10)) ]; do sleep 0.1; i=$((i + 1)); done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$f"
}

# port_free PORT: true when nothing listens on 127.0.0.1:PORT.
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
