import type { Controller, ControllerMetricsSink } from '../kube/controller.js';
import type { EventRecorder } from '../kube/events.js';
import type { InformerFactory } from '../kube/informers.js';
import type { Logger } from '../kube/log.js';
import type { RestClient } from '../kube/rest.js';
import type { FlagValues } from '../kube/flags.js';
import { crrController } from './crr/controller.js';
import type { managerFlags } from './options.js';
import { newImageListPullJobController } from './imagelistpulljob/controller.js';
import { newImagePullJobController } from './imagepulljob/controller.js';
import { newNodeImageController } from './nodeimage/controller.js';
import { preDownloadController } from './predownload/controller.js';

/** What every controller gets: the API, the shared caches, events, settings, metrics. */
export interface ControllerContext {
  rest: RestClient;
  informers: InformerFactory;
  /** An event recorder for one component name (upstream's event sources). */
  recorder: (component: string) => EventRecorder;
  flags: FlagValues<typeof managerFlags>;
  metrics: ControllerMetricsSink;
  logger: Logger;
}

export type ControllerFactory = (ctx: ControllerContext) => Controller | Promise<Controller | undefined> | undefined;

/**
 * The controllers the leader runs, in start order. Each entry builds one controller from the shared
 * context; informers they ask for are started and synced before any controller starts.
 */
export const controllerFactories: ControllerFactory[] = [
  newNodeImageController,
  newImagePullJobController,
  newImageListPullJobController,
  crrController,
  preDownloadController,
];
