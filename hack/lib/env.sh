# Names every path and port of one local environment. Sourced after common.sh.
# Two environments can run side by side on one host: give each its own KRUISE_TS_ENV name
# (and KRUISE_TS_PORT_OFFSET); every folder and port below follows from those two.
KRUISE_TS_ENV=${KRUISE_TS_ENV:-test}
KRUISE_TS_PORT_OFFSET=${KRUISE_TS_PORT_OFFSET:-0}
ENV_DIR=${KRUISE_TS_ENV_DIR:-/tmp/kruise-ts-$KRUISE_TS_ENV}
CACHE_DIR=${KRUISE_TS_CACHE:-${HOME:-/root}/.cache/kruise-ts}

REG_OPEN_PORT=$((5000 + KRUISE_TS_PORT_OFFSET))
REG_AUTH_PORT=$((5001 + KRUISE_TS_PORT_OFFSET))
REG_OPEN=127.0.0.1:$REG_OPEN_PORT
REG_AUTH=127.0.0.1:$REG_AUTH_PORT
REG_USER=tester
REG_PASS=s3cret-pass
PAUSE_IMAGE=$REG_OPEN/pause:1.0
# Registry storage outlives an environment so images are built and pushed once per machine.
REG_STORE=$CACHE_DIR/registry-$KRUISE_TS_ENV

# The standalone containerd that CRI tests drive directly (no kubelet may share it: a kubelet kills
# every pod it does not own).
LAB_CTRD=$ENV_DIR/ctrd-lab

export KRUISE_TS_ENV KRUISE_TS_PORT_OFFSET ENV_DIR CACHE_DIR REG_OPEN REG_AUTH
