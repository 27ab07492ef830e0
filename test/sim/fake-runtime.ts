// A simulated container runtime for the scale simulation: a real gRPC server on a unix socket
// speaking the project's CRI runtime.v1 subset, answering pulls after a configurable delay. It
// lives in the test tree: the production client talks to it unchanged.
import { rmSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import { contentProto, criProto } from '../../daemon/cri/proto.js';

export interface FakeRuntimeOptions {
  socket: string;
  /** How long a PullImage takes. */
  pullDelayMs: number;
}

export class FakeRuntime {
  private readonly server = new grpc.Server({ 'grpc.max_concurrent_streams': 100_000 });
  private readonly images = new Map<string, string>();

  private constructor(private readonly o: FakeRuntimeOptions) {}

  static async start(o: FakeRuntimeOptions): Promise<FakeRuntime> {
    const rt = new FakeRuntime(o);
    rt.register();
    rmSync(o.socket, { force: true });
    await new Promise<void>((resolve, reject) =>
      rt.server.bindAsync(`unix://${o.socket}`, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())),
    );
    return rt;
  }

  stop(): Promise<void> {
    return new Promise((r) => this.server.tryShutdown(() => r()));
  }

  private idOf(ref: string): string {
    let id = this.images.get(ref);
    if (!id) {
      id = `sha256:${Buffer.from(ref).toString('hex').padEnd(64, '0').slice(0, 64)}`;
      this.images.set(ref, id);
    }
    return id;
  }

  private register(): void {
    const v1 = criProto().runtime.v1;
    const unary = <Req, Res>(fn: (req: Req) => Promise<Res> | Res): grpc.handleUnaryCall<Req, Res> => {
      return (call, cb) => {
        Promise.resolve()
          .then(() => fn(call.request))
          .then(
            (res) => cb(null, res),
            (err: unknown) => cb(err as grpc.ServiceError),
          );
      };
    };
    const unimplemented = (): grpc.handleUnaryCall<unknown, unknown> => (_c, cb) => cb({ code: grpc.status.UNIMPLEMENTED, details: 'not simulated' } as grpc.ServiceError);
    const runtime: grpc.UntypedServiceImplementation = {};
    for (const m of Object.keys(v1.RuntimeService.service)) runtime[m] = unimplemented();
    runtime['Version'] = unary(() => ({ version: '0.1.0', runtime_name: 'fake', runtime_version: '1.0', runtime_api_version: 'v1' }));
    runtime['Status'] = unary(() => ({ status: { conditions: [{ type: 'RuntimeReady', status: true }] } }));
    const image: grpc.UntypedServiceImplementation = {
      PullImage: unary(async (req: { image?: { image?: string } }) => {
        const ref = req.image?.image ?? '';
        await new Promise((r) => setTimeout(r, this.o.pullDelayMs));
        return { image_ref: this.idOf(ref) };
      }),
      ImageStatus: unary((req: { image?: { image?: string } }) => {
        const ref = req.image?.image ?? '';
        const id = this.images.get(ref);
        return id ? { image: { id, repo_tags: [ref], repo_digests: [], size: '1048576' } } : { image: null };
      }),
      ListImages: unary(() => ({ images: [...this.images].map(([ref, id]) => ({ id, repo_tags: [ref], size: '1048576' })) })),
      RemoveImage: unary(() => ({})),
      ImageFsInfo: unary(() => ({ image_filesystems: [{ timestamp: String(Date.now()), fs_id: { mountpoint: '/' }, used_bytes: { value: '0' } }] })),
    };
    this.server.addService(v1.RuntimeService.service, runtime);
    this.server.addService(v1.ImageService.service, image);
    const content: grpc.UntypedServiceImplementation = {
      ListStatuses: unary(() => ({ statuses: [] })),
      Info: unary(() => {
        throw Object.assign(new Error('not found'), { code: grpc.status.NOT_FOUND, details: 'not found' });
      }),
    };
    this.server.addService(contentProto().containerd.services.content.v1.Content.service, content);
  }
}
