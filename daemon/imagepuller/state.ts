import type { ImagePullPhase } from '../../api/enums.js';
import type { ImageSpec, ImageTagSpec } from '../../api/types/nodeimage.js';

/** What the daemon knows about one image tag on its node. */
export interface TagState {
  image: string;
  tag: string;
  /** The spec version this state answers. */
  version: number;
  phase: ImagePullPhase;
  progress: number;
  startTime?: string;
  completionTime?: string;
  imageID?: string;
  message?: string;
}

/** One tag the NodeImage spec asks for, with its image-level settings. */
export interface DesiredTag {
  key: string;
  image: string;
  tag: string;
  version: number;
  spec: ImageTagSpec;
  imageSpec: ImageSpec;
}

export function tagKey(image: string, tag: string): string {
  return `${image}\u0000${tag}`;
}

export function isFinal(phase: ImagePullPhase): boolean {
  return phase === 'Succeeded' || phase === 'Failed';
}
