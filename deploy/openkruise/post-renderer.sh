#!/usr/bin/env bash
# Helm post-renderer for OpenKruise's chart: reads the rendered manifests on stdin and writes them
# without the admission webhooks of the four kinds kruise-ts serves (kustomization.yaml says why).
#   helm install kruise openkruise/kruise -f deploy/openkruise/values.yaml \
#     --post-renderer deploy/openkruise/post-renderer.sh
# Needs kubectl (its built-in kustomize). KUBECTL overrides which one.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$here/kustomization.yaml" "$here/without-daemon-kind-webhooks.yaml" "$work/"
cat > "$work/openkruise.yaml"
"${KUBECTL:-kubectl}" kustomize "$work"
