import type { ControllerFactory } from './context.js';
import { newCrrController } from './crr/controller.js';
import { newImageListPullJobController } from './imagelistpulljob/controller.js';
import { newImagePullJobController } from './imagepulljob/controller.js';
import { newNodeImageController } from './nodeimage/controller.js';
import { newPreDownloadController } from './predownload/controller.js';

/**
 * The controllers the leader runs, in start order. Each entry builds one controller from the shared
 * context; informers they ask for are started and synced before any controller starts.
 */
export const controllerFactories: ControllerFactory[] = [
  newNodeImageController,
  newImagePullJobController,
  newImageListPullJobController,
  newCrrController,
  newPreDownloadController,
];
