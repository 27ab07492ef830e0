#!/usr/bin/env bash
# Builds the kruise-ts image with no network, from what this machine has: its Node.js 20 (the binary
# and the libraries it links), the built dist/, production node_modules and the proto files, laid
# out as the Dockerfile's last stage lays them out (hack/image.json; a unit test keeps the two in
# step), as an OCI layout pushed to the environment's open registry.
#   bash hack/build-image.sh [TAG]      (default: the package version; prints the image reference)
# Needs `npm run build` first. Idempotent: an unchanged build pushes nothing.
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/env.sh"
source "$(dirname "$0")/lib/oci.sh"
cd "$(dirname "$0")/.."
IMG_CACHE=$CACHE_DIR/images
spec=hack/image.json
tag=${1:-$(jq -r .version package.json)}
[ -f dist/daemon/main.js ] && [ -f dist/manager/main.js ] || die "dist/ is missing: run npm run build first"
node_bin=$(node -e 'process.stdout.write(process.execPath)')
node_version=$(node --version)

# The runtime: node where distroless puts it, the shared libraries it links, a non-root user, /tmp
# and the CA bundle (registries over TLS).
fill_base() {
  local target; target=$(jq -r .node "$spec")
  mkdir -p "$ROOTFS$(dirname "$target")" "$ROOTFS/etc/ssl/certs" "$ROOTFS/tmp"
  chmod 1777 "$ROOTFS/tmp"
  cp "$node_bin" "$ROOTFS$target"
  local lib
  for lib in $(ldd "$node_bin" | grep -o '/[^ ]*'); do
    mkdir -p "$ROOTFS$(dirname "$lib")"
    cp -L "$lib" "$ROOTFS$lib"
  done
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' > "$ROOTFS/etc/passwd"
  printf 'root:x:0:\nnonroot:x:65532:\n' > "$ROOTFS/etc/group"
  cp /etc/ssl/certs/ca-certificates.crt "$ROOTFS/etc/ssl/certs/"
}

# The application: hack/image.json's files from a copy of the build with dev dependencies pruned.
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cp package.json package-lock.json "$stage/"
cp -a node_modules "$stage/node_modules"
( cd "$stage" && npm prune --omit=dev --ignore-scripts --no-audit --no-fund >/dev/null 2>&1 ) || die "npm prune failed"
fill_app() {
  local src dst
  while read -r src dst; do
    mkdir -p "$ROOTFS/app/$(dirname "$dst")"
    if [ "$src" = node_modules ] || [ "$src" = package.json ]; then cp -a "$stage/$src" "$ROOTFS/app/$dst"; else cp -a "$src" "$ROOTFS/app/$dst"; fi
  done < <(jq -r '.files[] | "\(.[0]) \(.[1])"' "$spec")
  find "$ROOTFS/app" -name '*.map' -delete
}

app_key=$( (jq -c . "$spec"; find dist/api dist/kube dist/daemon dist/manager dist/cli dist/proto proto package-lock.json -type f -print0 | sort -z | xargs -0 sha256sum) | sha256sum | cut -c1-16)
read -r _ _ base_size <<<"$(layer "kruise-ts-base-$node_version" fill_base)"
read -r _ _ app_size <<<"$(layer "kruise-ts-app-$app_key" fill_app)"
config=$(jq -c '{User: .user, WorkingDir: .workdir, Entrypoint: .entrypoint, Cmd: .cmd, Env: ["PATH=/nodejs/bin:/usr/bin:/bin", "NODE_ENV=production"]}' "$spec")
dir=$IMG_CACHE/kruise-ts-$app_key
# One layout per build, whatever tags it is pushed as.
layout "$dir" build "$config" "kruise-ts-base-$node_version" "kruise-ts-app-$app_key"
ref=$REG_OPEN/kruise-ts:$tag
push "$dir" build "$ref"
log "$ref: node $node_version, layers $(( base_size / 1048576 )) MiB + $(( app_size / 1048576 )) MiB compressed"
echo "$ref"
