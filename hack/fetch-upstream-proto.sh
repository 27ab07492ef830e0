#!/usr/bin/env bash
# Fetches upstream's CRI api.proto and containerd content.proto (from Debian's containerd source
# package, the version containerd 1.6 serves) into the cache, for the wire-compatibility test of
# proto/. Not used at run time.
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/env.sh"
out=$CACHE_DIR/upstream-proto
if [ -f "$out/cri-api-v1.proto" ] && [ -f "$out/containerd-content-v1.proto" ]; then exit 0; fi
require_root "$@"
ensure_deb_src
apt_install xz-utils dpkg-dev
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
( cd "$tmp" && apt-get source --download-only containerd 2>&1 | grep -v '^W: Download is performed unsandboxed' >/dev/null || true )
tar -C "$tmp" -xJf "$tmp"/containerd_*.orig.tar.xz --wildcards \
  '*/vendor/k8s.io/cri-api/pkg/apis/runtime/v1/api.proto' '*/api/services/content/v1/content.proto'
mkdir -p "$out"
cp "$tmp"/containerd-*/vendor/k8s.io/cri-api/pkg/apis/runtime/v1/api.proto "$out/cri-api-v1.proto"
cp "$tmp"/containerd-*/api/services/content/v1/content.proto "$out/containerd-content-v1.proto"
log "upstream protos in $out"
