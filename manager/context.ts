import type { Controller, ControllerMetricsSink } from '../kube/controller.js';
import type { EventRecorder } from '../kube/events.js';
import type { FlagValues } from '../kube/flags.js';
import type { KruiseApi } from '../kube/kruise.js';
import type { Logger } from '../kube/log.js';
import type { RestClient } from '../kube/rest.js';
import type { SharedInformers } from './informers.js';
import type { managerFlags } from './options.js';

export type ManagerFlags = FlagValues<typeof managerFlags>;

/** What every controller gets: the API, the shared caches, events, settings, metrics. */
export interface ControllerContext {
  rest: RestClient;
  /** The OpenKruise kinds in the versions the cluster serves. */
  kruise: KruiseApi;
  informers: SharedInformers;
  /** An event recorder for one component name (upstream's event sources). */
  recorder: (component: string) => EventRecorder;
  flags: ManagerFlags;
  metrics: ControllerMetricsSink;
  logger: Logger;
}

export type ControllerFactory = (ctx: ControllerContext) => Controller | Promise<Controller | undefined> | undefined;
