# OCI image layouts with no network: reproducible gzip layers, a config, a manifest, an index,
# pushed with skopeo. Sourced by hack/build-images.sh (test images) and hack/build-image.sh (kruise-ts).
# Needs IMG_CACHE (where layers and layouts are kept).

sha() { sha256sum "$1" | cut -d' ' -f1; }
size() { stat -c %s "$1"; }

# layer NAME CMD...: runs CMD with $ROOTFS as an empty folder to fill, then makes a reproducible
# gzip layer; prints "<diff_id> <digest> <size>" and caches the result by NAME.
layer() {
  local name=$1; shift
  local out="$IMG_CACHE/layers/$name"
  mkdir -p "$IMG_CACHE/layers"
  if [ ! -f "$out.meta" ]; then
    local tmp; tmp=$(mktemp -d)
    ROOTFS="$tmp/rootfs"; mkdir -p "$ROOTFS"
    "$@"
    tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$ROOTFS" -cf "$tmp/layer.tar" .
    gzip -n -1 -c "$tmp/layer.tar" > "$out.tar.gz.tmp"
    echo "$(sha "$tmp/layer.tar") $(sha "$out.tar.gz.tmp") $(size "$out.tar.gz.tmp")" > "$out.meta.tmp"
    mv "$out.tar.gz.tmp" "$out.tar.gz"; mv "$out.meta.tmp" "$out.meta"
    rm -rf "$tmp"
  fi
  cat "$out.meta"
}

# layout DIR TAG CONFIG_JSON LAYER_NAME...: writes an OCI layout (once); CONFIG_JSON is the image
# config's "config" object (Entrypoint, Cmd, User, Env, ...).
layout() {
  local dir=$1 tag=$2 config=$3; shift 3
  [ -f "$dir/index.json" ] && return 0
  rm -rf "$dir"; mkdir -p "$dir/blobs/sha256"
  local diff_ids="" layers="" n meta d g s
  for n in "$@"; do
    meta=$(cat "$IMG_CACHE/layers/$n.meta"); read -r d g s <<<"$meta"
    cp "$IMG_CACHE/layers/$n.tar.gz" "$dir/blobs/sha256/$g"
    diff_ids="$diff_ids${diff_ids:+,}\"sha256:$d\""
    layers="$layers${layers:+,}{\"mediaType\":\"application/vnd.oci.image.layer.v1.tar+gzip\",\"digest\":\"sha256:$g\",\"size\":$s}"
  done
  printf '{"imageLayoutVersion":"1.0.0"}' > "$dir/oci-layout"
  local tmp; tmp=$(mktemp -d)
  printf '{"architecture":"amd64","os":"linux","config":%s,"rootfs":{"type":"layers","diff_ids":[%s]}}' "$config" "$diff_ids" > "$tmp/config.json"
  local cfg; cfg=$(sha "$tmp/config.json"); cp "$tmp/config.json" "$dir/blobs/sha256/$cfg"
  printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[%s]}' \
    "$cfg" "$(size "$tmp/config.json")" "$layers" > "$tmp/manifest.json"
  local man; man=$(sha "$tmp/manifest.json"); cp "$tmp/manifest.json" "$dir/blobs/sha256/$man"
  printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"annotations":{"org.opencontainers.image.ref.name":"%s"}}]}' \
    "$man" "$(size "$tmp/manifest.json")" "$tag" > "$dir/index.json"
  rm -rf "$tmp"
}

# push DIR TAG DEST [CREDS]: pushes unless the registry already has DEST with this manifest.
push() {
  local dir=$1 tag=$2 dest=$3 creds=${4:-}
  local host=${dest%%/*} rest=${dest#*/}
  local repo=${rest%:*} rtag=${rest##*:}
  local auth=(); [ -n "$creds" ] && auth=(-u "$creds")
  local want; want=$(jq -r '.manifests[0].digest' "$dir/index.json")
  local have; have=$(curl -fsS -o /dev/null -w '%header{docker-content-digest}' "${auth[@]}" -H 'Accept: application/vnd.oci.image.manifest.v1+json' \
      "http://$host/v2/$repo/manifests/$rtag" 2>/dev/null || true)
  [ "$have" = "$want" ] && return 0
  local dc=(); [ -n "$creds" ] && dc=(--dest-creds "$creds")
  skopeo copy -q --insecure-policy --dest-tls-verify=false "${dc[@]}" "oci:$dir:$tag" "docker://$dest" >/dev/null
}
