// Generates TypeScript types for proto/*.proto into proto/gen (not committed: always from the proto).
import { execFileSync } from 'node:child_process';
import { rmSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const protoDir = join(root, 'proto');
const out = join(protoDir, 'gen');
rmSync(out, { recursive: true, force: true });
const files = readdirSync(protoDir).filter((f) => f.endsWith('.proto'));
execFileSync(
  process.execPath,
  [
    join(root, 'node_modules/@grpc/proto-loader/build/bin/proto-loader-gen-types.js'),
    '--keepCase', '--longs=String', '--enums=String', '--defaults', '--oneofs',
    '--grpcLib=@grpc/grpc-js', '--importFileExtension=.js',
    '-I', protoDir, '-O', out, ...files,
  ],
  { stdio: 'inherit', cwd: protoDir },
);
