#!/usr/bin/env bash
# For a cluster where OpenKruise already runs: after `helm upgrade ... -f deploy/openkruise/values.yaml`
# (KruiseDaemon=false), takes OpenKruise's admission webhooks for NodeImage, ImagePullJob,
# ImageListPullJob and ContainerRecreateRequest out of its two webhook configurations, and out of
# the copy its manager rebuilds them from (the `template` annotation), so they stay out.
# Matches by the resources a webhook covers, whatever the chart version named it. Idempotent.
# Needs kubectl and jq; uses the current kubectl context (KUBECTL overrides the command).
set -euo pipefail
kubectl=${KUBECTL:-kubectl}
filter='
  def ours: [.rules[]? | select((.apiGroups // []) | index("apps.kruise.io")) | (.resources // [])[] | split("/")[0]]
            | any(. == "nodeimages" or . == "imagepulljobs" or . == "imagelistpulljobs" or . == "containerrecreaterequests");
  def keep: map(select(ours | not));
  .webhooks |= ((. // []) | keep)
  | if (.metadata.annotations.template // "") != "" then .metadata.annotations.template |= (fromjson | keep | tojson) else . end'
for kind in mutating validating; do
  name=kruise-$kind-webhook-configuration
  for attempt in 1 2 3 4 5; do
    current=$("$kubectl" get "${kind}webhookconfiguration" "$name" -o json)
    wanted=$(jq -c "$filter" <<<"$current")
    if [ "$(jq -c . <<<"$current")" = "$wanted" ]; then echo "$name: nothing to take out"; break; fi
    # replace carries the resourceVersion read: a concurrent change by OpenKruise's manager is a conflict, retried.
    if "$kubectl" replace -f - <<<"$wanted" >/dev/null; then
      echo "$name: NodeImage, ImagePullJob, ImageListPullJob and ContainerRecreateRequest webhooks taken out"
      break
    fi
    [ "$attempt" = 5 ] && { echo "$name: could not update after $attempt attempts" >&2; exit 1; }
    sleep 1
  done
done
