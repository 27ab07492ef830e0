#!/usr/bin/env bash
# Installs the Debian packages the local environment needs (only those missing). Idempotent.
source "$(dirname "$0")/lib/common.sh"
require_root "$@"
apt_install containerd runc docker-registry skopeo busybox-static apache2-utils containernetworking-plugins \
  curl xz-utils iptables openssl jq ca-certificates etcd-server
log "Debian packages present"
