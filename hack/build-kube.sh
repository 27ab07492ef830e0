#!/usr/bin/env bash
# Builds kube-apiserver, kube-controller-manager, kube-scheduler, kubelet and kubectl v1.20.2 from Debian bookworm's
# `kubernetes` source package into a per-user cache outside the repository, once. Later runs reuse it.
#   KRUISE_TS_CACHE   cache root (default ~/.cache/kruise-ts)
#   --force           rebuild even when the binaries exist
#   --watch-chan-size also build kube-apiserver-watch-chan-size: kube-apiserver with
#                     hack/patches/kube-apiserver-watch-chan-size.patch, upstream's later sizing of a
#                     watcher's event buffer, for the scale benchmark's comparison (KRUISE_TS_APISERVER_BIN)
source "$(dirname "$0")/lib/common.sh"

K8S_VERSION=1.20.2
CACHE=${KRUISE_TS_CACHE:-${HOME:-/root}/.cache/kruise-ts}
K8S_HOME="$CACHE/k8s-$K8S_VERSION"
K8S_BIN_DIR="$K8S_HOME/bin"
SRC_PARENT="$K8S_HOME/src"
BINARIES=(kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl)
FORCE=
VARIANT=
for arg in "$@"; do
  case "$arg" in
    --force) FORCE=--force ;;
    --watch-chan-size) VARIANT=kube-apiserver-watch-chan-size ;;
    *) die "unknown argument $arg" ;;
  esac
done
PATCH_FILE=$(cd "$(dirname "$0")" && pwd)/patches/kube-apiserver-watch-chan-size.patch

version_of() { if [ "$1" = kubectl ]; then "$K8S_BIN_DIR/$1" version --client --short 2>/dev/null; else "$K8S_BIN_DIR/$1" --version 2>/dev/null; fi; }
have_binary() { [ -x "$K8S_BIN_DIR/$1" ] && version_of "$1" | grep -q "v$K8S_VERSION"; }

missing=()
for b in "${BINARIES[@]}"; do
  if [ "$FORCE" = --force ] || ! have_binary "$b"; then missing+=("$b"); fi
done
want_variant=false
if [ -n "$VARIANT" ] && { [ "$FORCE" = --force ] || [ ! -x "$K8S_BIN_DIR/$VARIANT" ]; }; then want_variant=true; fi
if [ "${#missing[@]}" -eq 0 ] && [ "$want_variant" = false ]; then
  log "all binaries present in $K8S_BIN_DIR"
  exit 0
fi

require_root
mkdir -p "$K8S_BIN_DIR" "$SRC_PARENT"
exec 8>"$K8S_HOME/build.lock"
log "waiting for the build lock $K8S_HOME/build.lock"
flock 8

ensure_deb_src
apt_install golang-go rsync jq make patch golang-github-modern-go-reflect2-dev golang-github-json-iterator-go-dev

TREE="$SRC_PARENT/kubernetes-$K8S_VERSION"
if [ ! -f "$TREE/.kruise-ts-prepared" ]; then
  log "fetching Debian's kubernetes source package"
  rm -rf "$TREE"
  ( cd "$SRC_PARENT" && apt-get source --download-only kubernetes 2>&1 | grep -v '^W: Download is performed unsandboxed' || true )
  ( cd "$SRC_PARENT" && tar xzf kubernetes_*.orig.tar.gz )
  [ -d "$TREE" ] || die "expected $TREE after unpacking the source package"
  tar xJf "$SRC_PARENT"/kubernetes_*.debian.tar.xz -C "$TREE"
  ( cd "$TREE" && while read -r p; do
      case "$p" in ''|'#'*) continue;; esac
      patch -s -p1 < "debian/patches/$p"
    done < debian/patches/series )
  # Go >= 1.18 crashes in the vendored reflect2 1.0.1 on the first JSON-encoded map; swap in Debian's 1.0.2.
  for pkg in modern-go/reflect2 json-iterator/go; do
    find "$TREE/vendor/github.com/$pkg" -maxdepth 1 \( -name '*.go' -o -name '*.s' \) -delete
    find "/usr/share/gocode/src/github.com/$pkg" -maxdepth 1 \( -name '*.go' -o -name '*.s' \) ! -name '*_test.go' \
      -exec cp {} "$TREE/vendor/github.com/$pkg/" \;
  done
  rm -f "$SRC_PARENT"/kubernetes_*.tar.* "$SRC_PARENT"/kubernetes_*.dsc
  touch "$TREE/.kruise-ts-prepared"
fi

# build_binary CMD NAME: builds cmd/CMD in the tree and installs it as NAME.
build_binary() {
  ( cd "$TREE" && env -u GOFLAGS -u OUT_DIR GOPROXY=off CGO_ENABLED=0 HOME="${HOME:-/root}" \
      make WHAT="cmd/$1" 2>&1 | sed -u "s/^/[make $2] /" ) >&2
  cp "$TREE/_output/local/bin/linux/amd64/$1" "$K8S_BIN_DIR/.$2.tmp"
  mv "$K8S_BIN_DIR/.$2.tmp" "$K8S_BIN_DIR/$2"
}

for b in "${missing[@]}"; do
  log "building $b (the first one takes ~6 min on 2 cores, the others 0.5-2 min)"
  start=$(date +%s)
  build_binary "$b" "$b"
  have_binary "$b" || die "$b was built but does not report v$K8S_VERSION"
  log "built $b in $(( $(date +%s) - start )) s"
done
if [ "$want_variant" = true ]; then
  log "building $VARIANT"
  # The tree goes back to the package's source whatever happens: the plain binaries are built from it.
  ( cd "$TREE" && patch -s -p1 < "$PATCH_FILE" )
  trap '( cd "$TREE" && patch -s -R -p1 < "$PATCH_FILE" )' EXIT
  build_binary kube-apiserver "$VARIANT"
fi
log "binaries in $K8S_BIN_DIR"
