#!/usr/bin/env bash
# Builds the test images as OCI layouts with no network (busybox-static plus generated layers) and
# pushes them to the environment's registries. Layouts are cached in $CACHE_DIR/images and registry
# storage persists, so later runs only check what is already there.
#
# Images (open registry unless noted):
#   busybox:1.0, busybox:latest   same digest (two tags of one manifest)
#   busybox:1.1                   one more layer: another digest
#   pause:1.0                     busybox layer, entrypoint sleep infinity (containerd's sandbox image)
#   big:1.0                       plus a 50 MiB random layer
#   many-001 .. many-100 :1.0     each with its own 1 MiB random layer (distinct image IDs)
#   REG_AUTH/private/busybox:1.0  on the htpasswd registry, with its own layer
#   library/busybox:1.36, library/nginx:1.25, library/nginx:1.26
#                                 what docker.io names resolve to through the mirror every
#                                 environment's containerd has (deploy/examples use them)
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/env.sh"

IMG_CACHE=$CACHE_DIR/images
MANY=${KRUISE_TS_MANY_IMAGES:-100}

source "$(dirname "$0")/lib/oci.sh"

fill_busybox() {
  mkdir -p "$ROOTFS"/{bin,etc,tmp,root}
  cp /bin/busybox "$ROOTFS/bin/busybox"
  local a
  for a in $("$ROOTFS/bin/busybox" --list); do [ "$a" = busybox ] || ln -sf busybox "$ROOTFS/bin/$a"; done
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' > "$ROOTFS/etc/passwd"
  printf 'root:x:0:\nnogroup:x:65534:\n' > "$ROOTFS/etc/group"
}
fill_text() { mkdir -p "$ROOTFS/etc"; printf '%s\n' "$1" > "$ROOTFS/etc/kruise-ts-image"; }
fill_random() { mkdir -p "$ROOTFS/data"; head -c "$1" /dev/urandom > "$ROOTFS/data/blob.bin"; }

# image DIR TAG ENTRYPOINT_JSON CMD_JSON LAYER_NAME...: a test image's OCI layout (once).
image() {
  local dir=$1 tag=$2 ep=$3 cmd=$4; shift 4
  layout "$dir" "$tag" "{\"Env\":[\"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\"],\"Entrypoint\":$ep,\"Cmd\":$cmd}" "$@"
}

BB='["/bin/sh","-c"]'; SLEEP='["sleep infinity"]'
start=$(date +%s)
layer busybox fill_busybox >/dev/null
layer v11 fill_text "busybox 1.1" >/dev/null
layer private fill_text "private" >/dev/null
layer big fill_random 52428800 >/dev/null

image "$IMG_CACHE/busybox-1.0" 1.0 "$BB" "$SLEEP" busybox
image "$IMG_CACHE/busybox-1.1" 1.1 "$BB" "$SLEEP" busybox v11
image "$IMG_CACHE/pause-1.0" 1.0 '["/bin/sleep"]' '["infinity"]' busybox
image "$IMG_CACHE/big-1.0" 1.0 "$BB" "$SLEEP" busybox big
image "$IMG_CACHE/private-1.0" 1.0 "$BB" "$SLEEP" busybox private

push "$IMG_CACHE/busybox-1.0" 1.0 "$REG_OPEN/busybox:1.0"
push "$IMG_CACHE/busybox-1.0" 1.0 "$REG_OPEN/busybox:latest"
push "$IMG_CACHE/busybox-1.1" 1.1 "$REG_OPEN/busybox:1.1"
push "$IMG_CACHE/pause-1.0" 1.0 "$REG_OPEN/pause:1.0"
push "$IMG_CACHE/big-1.0" 1.0 "$REG_OPEN/big:1.0"
push "$IMG_CACHE/private-1.0" 1.0 "$REG_AUTH/private/busybox:1.0" "$REG_USER:$REG_PASS"
layer nginx125 fill_text "nginx 1.25 stand-in" >/dev/null
layer nginx126 fill_text "nginx 1.26 stand-in" >/dev/null
image "$IMG_CACHE/nginx-1.25" 1.25 "$BB" "$SLEEP" busybox nginx125
image "$IMG_CACHE/nginx-1.26" 1.26 "$BB" "$SLEEP" busybox nginx126
push "$IMG_CACHE/busybox-1.1" 1.1 "$REG_OPEN/library/busybox:1.36"
push "$IMG_CACHE/nginx-1.25" 1.25 "$REG_OPEN/library/nginx:1.25"
push "$IMG_CACHE/nginx-1.26" 1.26 "$REG_OPEN/library/nginx:1.26"

many_one() {
  local n; n=$(printf '%03d' "$1")
  layer "many-$n" fill_random 1048576 >/dev/null
  image "$IMG_CACHE/many-$n" 1.0 "$BB" "$SLEEP" busybox "many-$n"
  push "$IMG_CACHE/many-$n" 1.0 "$REG_OPEN/many-$n:1.0"
}
export -f many_one layer layout image push sha size fill_random
export IMG_CACHE REG_OPEN BB SLEEP
seq 1 "$MANY" | xargs -P 4 -I{} bash -c 'set -euo pipefail; many_one {}'
log "images ready in $REG_OPEN and $REG_AUTH ($(( $(date +%s) - start )) s): busybox:1.0/latest/1.1, pause:1.0, big:1.0, many-001..$(printf '%03d' "$MANY"):1.0, $REG_AUTH/private/busybox:1.0, library/{busybox:1.36,nginx:1.25,nginx:1.26}"
