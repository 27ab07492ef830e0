import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { ProtoGrpcType as CriGrpc } from '../../proto/gen/cri-api.js';
import type { ProtoGrpcType as ContentGrpc } from '../../proto/gen/containerd-content.js';
import type { ProtoGrpcType as CriV1alpha2Grpc } from '../../proto/gen/cri-api-v1alpha2.js';

// Sources run from daemon/cri and the build from dist/daemon/cri: walk up to the folder holding proto/.
function protoDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'proto', 'cri-api.proto');
    if (existsSync(candidate)) return join(dir, 'proto');
    const parent = dirname(dir);
    if (parent === dir) throw new Error('cannot find proto/cri-api.proto above ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
}

const loaderOptions: protoLoader.Options = {
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
};

let cri: CriGrpc | undefined;
let content: ContentGrpc | undefined;
let criV1alpha2: CriV1alpha2Grpc | undefined;

export function criProto(): CriGrpc {
  if (!cri) {
    const dir = protoDir();
    const def = protoLoader.loadSync(join(dir, 'cri-api.proto'), { ...loaderOptions, includeDirs: [dir] });
    cri = grpc.loadPackageDefinition(def) as unknown as CriGrpc;
  }
  return cri;
}

export function contentProto(): ContentGrpc {
  if (!content) {
    const dir = protoDir();
    const def = protoLoader.loadSync(join(dir, 'containerd-content.proto'), { ...loaderOptions, includeDirs: [dir] });
    content = grpc.loadPackageDefinition(def) as unknown as ContentGrpc;
  }
  return content;
}

export function criV1alpha2Proto(): CriV1alpha2Grpc {
  if (!criV1alpha2) {
    const dir = protoDir();
    const def = protoLoader.loadSync(join(dir, 'cri-api-v1alpha2.proto'), { ...loaderOptions, includeDirs: [dir] });
    criV1alpha2 = grpc.loadPackageDefinition(def) as unknown as CriV1alpha2Grpc;
  }
  return criV1alpha2;
}
