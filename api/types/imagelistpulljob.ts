import type { CustomObject, Rfc3339 } from './common.js';
import type { ImagePullJobTemplate } from './imagepulljob.js';

export interface ImageListPullJobSpec extends ImagePullJobTemplate {
  images: string[];
}

/** A child ImagePullJob that has failed nodes. */
export interface FailedImageStatus {
  imagePullJob?: string;
  /** The image. */
  name?: string;
  message?: string;
}

export interface ImageListPullJobStatus {
  startTime?: Rfc3339;
  completionTime?: Rfc3339;
  /** Number of images (= child jobs). */
  desired: number;
  active?: number;
  completed?: number;
  succeeded?: number;
  failedImageStatuses?: FailedImageStatus[];
}

export type ImageListPullJob = CustomObject<ImageListPullJobSpec, ImageListPullJobStatus>;
