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

/** A proto file of proto/, loaded once on first use. */
function loadedOnce<T>(file: string): () => T {
  let loaded: T | undefined;
  return () => {
    if (!loaded) {
      const dir = protoDir();
      const def = protoLoader.loadSync(join(dir, file), { ...loaderOptions, includeDirs: [dir] });
      loaded = grpc.loadPackageDefinition(def) as unknown as T;
    }
    return loaded;
  };
}

export const criProto = loadedOnce<CriGrpc>('cri-api.proto');
export const contentProto = loadedOnce<ContentGrpc>('containerd-content.proto');
export const criV1alpha2Proto = loadedOnce<CriV1alpha2Grpc>('cri-api-v1alpha2.proto');
