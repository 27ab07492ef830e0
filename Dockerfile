# One small image with both entry points:
#   /nodejs/bin/node --max-semi-space-size=1 --lite-mode /app/dist/daemon/main.js   (kruise-daemon, the DaemonSet)
#   /nodejs/bin/node /app/dist/manager/main.js                          (kruise-manager, the Deployment)
FROM node:20-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY proto ./proto
COPY hack/gen-proto.mjs ./hack/gen-proto.mjs
COPY api ./api
COPY kube ./kube
COPY daemon ./daemon
COPY manager ./manager
COPY cli ./cli
# The build also compiles hack/ and test/sim; only their sources are needed for tsc to succeed.
COPY hack ./hack
COPY test/sim ./test/sim
RUN npm run build && npm prune --omit=dev --ignore-scripts

FROM gcr.io/distroless/nodejs20-debian12:nonroot
WORKDIR /app
COPY --from=build /src/package.json ./package.json
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist/api ./dist/api
COPY --from=build /src/dist/kube ./dist/kube
COPY --from=build /src/dist/daemon ./dist/daemon
COPY --from=build /src/dist/manager ./dist/manager
COPY --from=build /src/dist/cli ./dist/cli
COPY --from=build /src/dist/proto ./dist/proto
COPY --from=build /src/proto/cri-api.proto /src/proto/cri-api-v1alpha2.proto /src/proto/containerd-content.proto ./proto/
# distroless's entrypoint is node itself; the manifests give the script and its flags.
CMD ["/app/dist/manager/main.js"]
