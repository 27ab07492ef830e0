import * as grpc from '@grpc/grpc-js';
import type { MethodDefinition } from '@grpc/proto-loader';
import type { RuntimeServiceDefinition } from '../../proto/gen/runtime/v1/RuntimeService.js';
import type { ImageServiceDefinition } from '../../proto/gen/runtime/v1/ImageService.js';
import type { ContentDefinition } from '../../proto/gen/containerd/services/content/v1/Content.js';
import type { Status__Output as IngestStatus } from '../../proto/gen/containerd/services/content/v1/Status.js';
import type { AuthConfig } from '../../proto/gen/runtime/v1/AuthConfig.js';
import type { PodSandboxConfig } from '../../proto/gen/runtime/v1/PodSandboxConfig.js';
import { contentProto, criProto } from './proto.js';
import { CriError, notInitialized, toCriError } from './errors.js';
import { CRI_STOP_RUNTIME_TIMEOUT_SECONDS } from '../../api/limits.js';

type In<M> = M extends MethodDefinition<infer Req, infer _Res, infer _OReq, infer _ORes> ? Req : never;
type Out<M> = M extends MethodDefinition<infer _Req, infer _Res, infer _OReq, infer ORes> ? ORes : never;
// The generated service definitions extend grpc's string index signature; keep only real methods.
type Methods<T> = keyof { [K in keyof T as string extends K ? never : K]: T[K] } & string;

interface UnaryDef<Req, Res> {
  path: string;
  requestSerialize: (req: Req) => Buffer;
  responseDeserialize: (buf: Buffer) => Res;
}

export interface CallOptions {
  /** Milliseconds until the call is abandoned with a deadline error. */
  timeoutMs?: number;
  signal?: AbortSignal | undefined;
  /** Wait for the socket to come (back) instead of failing fast; true except for probes. */
  waitForReady?: boolean;
}

// A method definition's serializers map exactly In<M> and Out<M>; TypeScript cannot follow the
// conditional types through a generic method key, hence this one cast.
function unaryDef<M>(def: M): UnaryDef<In<M>, Out<M>> {
  return def as unknown as UnaryDef<In<M>, Out<M>>;
}

/** Accepts "unix:///path", "unix:/path" and plain "/path"; returns the socket path. */
export function socketPath(endpoint: string): string {
  const e = endpoint.trim();
  if (e.startsWith('unix://')) return e.slice('unix://'.length);
  if (e.startsWith('unix:')) return e.slice('unix:'.length);
  if (e.startsWith('/')) return e;
  throw new Error(`unsupported runtime endpoint "${endpoint}": expected unix:///path/to/socket or an absolute socket path`);
}

/** The containerd namespace the CRI plugin keeps its images and content in. */
const CONTAINERD_NAMESPACE = 'k8s.io';

/** The deadline of a call whose caller sets none, unless defaultTimeouts names one for it. */
const DEFAULT_TIMEOUT_MS = 30_000;

const defaultTimeouts: Partial<Record<string, number>> = {
  Version: 10_000,
  Status: 10_000,
  ImageFsInfo: 10_000,
  PullImage: 600_000,
  RunPodSandbox: 120_000,
  CreateContainer: 60_000,
  StartContainer: 60_000,
};

// Calls that change nothing: when the runtime drops the connection under them (it restarted), they
// are sent again until their deadline. Mutating calls report the failure to their caller, who knows
// whether repeating is safe.
const readOnly = new Set([
  'Version',
  'Status',
  'ListPodSandbox',
  'ListContainers',
  'ContainerStatus',
  'ListImages',
  'ImageStatus',
  'ImageFsInfo',
  'ListStatuses',
  'Info',
]);

export interface CriClientOptions {
  /** Told of every call the runtime answered or failed: its method and "ok" or the failure's kind. */
  onCall?: (method: string, result: string) => void;
}

/**
 * A typed CRI runtime.v1 client over one gRPC channel. Every call has a deadline; the channel
 * reconnects by itself (quickly: the runtime is local) after the runtime restarts.
 */
export class CriClient {
  readonly endpoint: string;
  private readonly channel: grpc.Client;
  private readonly rtDef: RuntimeServiceDefinition;
  private readonly imgDef: ImageServiceDefinition;
  private readonly contentDef: ContentDefinition;

  constructor(
    endpoint: string,
    private readonly opts: CriClientOptions = {},
  ) {
    this.endpoint = `unix://${socketPath(endpoint)}`;
    const v1 = criProto().runtime.v1;
    this.rtDef = v1.RuntimeService.service;
    this.imgDef = v1.ImageService.service;
    this.contentDef = contentProto().containerd.services.content.v1.Content.service;
    this.channel = new grpc.Client(this.endpoint, grpc.credentials.createInsecure(), {
      'grpc.initial_reconnect_backoff_ms': 100,
      'grpc.max_reconnect_backoff_ms': 1000,
      'grpc.min_reconnect_backoff_ms': 100,
      'grpc.max_receive_message_length': 16 * 1024 * 1024,
      'grpc.enable_retries': 0,
    });
  }

  runtime<K extends Methods<RuntimeServiceDefinition>>(
    method: K,
    req: In<RuntimeServiceDefinition[K]>,
    opts: CallOptions = {},
  ): Promise<Out<RuntimeServiceDefinition[K]>> {
    return this.unary(method, unaryDef(this.rtDef[method]), req, opts);
  }

  image<K extends Methods<ImageServiceDefinition>>(
    method: K,
    req: In<ImageServiceDefinition[K]>,
    opts: CallOptions = {},
  ): Promise<Out<ImageServiceDefinition[K]>> {
    return this.unary(method, unaryDef(this.imgDef[method]), req, opts);
  }

  /** Size of a blob in containerd's content store, or undefined when it is not there. */
  async contentSize(digest: string): Promise<number | undefined> {
    try {
      const res = await this.unary('Info', this.contentDef.Info, { digest }, { timeoutMs: 5_000 }, { 'containerd-namespace': CONTAINERD_NAMESPACE });
      return Number(res.info?.size ?? 0);
    } catch (err) {
      if (err instanceof CriError && err.kind === 'not-found') return undefined;
      throw err;
    }
  }

  /** Active content ingests (layer downloads in flight) from containerd's native API. */
  async ingests(): Promise<IngestStatus[]> {
    const res = await this.unary('ListStatuses', this.contentDef.ListStatuses, {}, { timeoutMs: 5_000 }, {
      'containerd-namespace': CONTAINERD_NAMESPACE,
    });
    return res.statuses;
  }

  async pullImage(
    image: string,
    auth: AuthConfig | undefined,
    sandboxConfig: PodSandboxConfig | undefined,
    opts: CallOptions = {},
  ): Promise<string> {
    const res = await this.image(
      'PullImage',
      { image: { image }, ...(auth ? { auth } : {}), ...(sandboxConfig ? { sandbox_config: sandboxConfig } : {}) },
      opts,
    );
    return res.image_ref;
  }

  /** StopContainer with the CRI grace semantics: TERM, then KILL after graceSeconds. */
  async stopContainer(containerId: string, graceSeconds: number, opts: CallOptions = {}): Promise<void> {
    await this.runtime(
      'StopContainer',
      { container_id: containerId, timeout: String(graceSeconds) },
      { timeoutMs: (graceSeconds + CRI_STOP_RUNTIME_TIMEOUT_SECONDS) * 1000, ...opts },
    );
  }

  close(): void {
    this.channel.close();
  }

  private async unary<Req, Res>(
    name: string,
    def: UnaryDef<Req, Res>,
    req: Req,
    opts: CallOptions,
    headers: Record<string, string> = {},
  ): Promise<Res> {
    const deadline = Date.now() + (opts.timeoutMs ?? defaultTimeouts[name] ?? DEFAULT_TIMEOUT_MS);
    for (;;) {
      try {
        return await this.once(name, def, req, opts, headers, deadline);
      } catch (err) {
        const retry =
          err instanceof CriError &&
          err.kind === 'unavailable' &&
          (readOnly.has(name) || notInitialized(err.details)) &&
          (opts.waitForReady ?? true) &&
          Date.now() + 200 < deadline;
        if (!retry) throw err;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }

  private once<Req, Res>(
    name: string,
    def: UnaryDef<Req, Res>,
    req: Req,
    opts: CallOptions,
    headers: Record<string, string>,
    deadline: number,
  ): Promise<Res> {
    const md = new grpc.Metadata({ waitForReady: opts.waitForReady ?? true });
    for (const [k, v] of Object.entries(headers)) md.set(k, v);
    return new Promise<Res>((resolve, reject) => {
      if (opts.signal?.aborted) {
        reject(new CriError('cancelled', name, grpc.status.CANCELLED, 'aborted before the call'));
        return;
      }
      const call = this.channel.makeUnaryRequest<Req, Res>(
        def.path,
        def.requestSerialize,
        def.responseDeserialize,
        req,
        md,
        { deadline },
        (err, res) => {
          opts.signal?.removeEventListener('abort', onAbort);
          if (err) {
            const e = toCriError(name, err);
            this.opts.onCall?.(name, e.kind);
            reject(e);
          } else if (res === undefined) {
            this.opts.onCall?.(name, 'other');
            reject(new CriError('other', name, undefined, 'empty response'));
          } else {
            this.opts.onCall?.(name, 'ok');
            resolve(res);
          }
        },
      );
      const onAbort = (): void => call.cancel();
      opts.signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}
