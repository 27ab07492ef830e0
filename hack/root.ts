import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The project root (where package.json is), from the sources (tests) as from the build (dist/). */
export function projectRoot(): string {
  let d = import.meta.dirname;
  while (!existsSync(join(d, 'package.json')) && dirname(d) !== d) d = dirname(d);
  return d;
}
