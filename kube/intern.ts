/**
 * Shares equal values between the objects a cache holds. JSON.parse gives every object of every
 * watch event its own copy of each string and sub-object, and a manager's caches repeat the same
 * few values thousands of times: every NodeImage of a job carries that job's owner reference, pull
 * policy, image name and digest. Interned, 1,000 NodeImages of 200 tags each take about a third of
 * the heap they take as parsed (see BENCHMARKS.md, "kruise-manager at scale").
 *
 * Strings are deduplicated; so is every small object or array (at most MAX_SHARED_ENTRIES entries,
 * each a primitive or itself shared), which is frozen when it becomes shared: a cached object is
 * read-only, and a shared one written in place would change every object holding it.
 *
 * The tables hold two generations, so values that stop appearing (old timestamps, deleted objects'
 * UIDs) are forgotten: when the current one fills it becomes the previous one, and a value found
 * only in the previous one moves back into the current one.
 */
const MAX_SHARED_ENTRIES = 8;
const FNV_OFFSET = 0x811c9dc5 | 0;
const FNV_PRIME = 16777619;

type Json = string | number | boolean | null | Json[] | { [k: string]: Json };

class Generations<K, V> {
  private current = new Map<K, V>();
  private previous = new Map<K, V>();

  constructor(private readonly capacity: number) {}

  get(key: K): V | undefined {
    const v = this.current.get(key);
    if (v !== undefined) return v;
    const old = this.previous.get(key);
    if (old !== undefined) this.set(key, old);
    return old;
  }

  set(key: K, value: V): void {
    if (this.current.size >= this.capacity) {
      this.previous = this.current;
      this.current = new Map();
    }
    this.current.set(key, value);
  }

  get size(): number {
    return this.current.size + this.previous.size;
  }
}

function hashString(s: string, h: number): number {
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), FNV_PRIME);
  return h;
}

function sameEntries(a: object, b: object): boolean {
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
    return true;
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  for (let i = 0; i < ka.length; i++) {
    const k = ka[i] as string;
    if (k !== kb[i] || ra[k] !== rb[k]) return false;
  }
  return true;
}

export class Interner {
  private readonly strings: Generations<string, string>;
  private readonly shared: Generations<number, object>;
  /** The hash of each shared object, which its parents' hashes are made of. */
  private readonly hashes = new WeakMap<object, number>();

  constructor(capacity = { strings: 65_536, objects: 262_144 }) {
    this.strings = new Generations(capacity.strings);
    this.shared = new Generations(capacity.objects);
  }

  /** The same value with its parts shared; `value` itself may be changed in place (only its own copies are replaced). */
  intern<T>(value: T): T {
    return this.walk(value as Json) as T;
  }

  /** Entries held, for tests and metrics. */
  size(): { strings: number; objects: number } {
    return { strings: this.strings.size, objects: this.shared.size };
  }

  private string(s: string): string {
    const known = this.strings.get(s);
    if (known !== undefined) return known;
    this.strings.set(s, s);
    return s;
  }

  private walk(v: Json): Json {
    if (typeof v === 'string') return this.string(v);
    if (v === null || typeof v !== 'object') return v;
    // Frozen: already interned (a shared part of an object seen before).
    if (Object.isFrozen(v)) return v;
    let shareable: boolean;
    let h = Array.isArray(v) ? FNV_OFFSET ^ 0x5bd1e995 : FNV_OFFSET;
    if (Array.isArray(v)) {
      shareable = v.length > 0 && v.length <= MAX_SHARED_ENTRIES;
      for (let i = 0; i < v.length; i++) {
        const c = this.walk(v[i] as Json);
        v[i] = c;
        if (shareable) h = this.mix(c, h);
        if (h === 0) shareable = false;
      }
    } else {
      const keys = Object.keys(v);
      shareable = keys.length > 0 && keys.length <= MAX_SHARED_ENTRIES;
      for (const k of keys) {
        const c = this.walk(v[k] as Json);
        v[k] = c;
        if (shareable) {
          h = this.mix(c, hashString(k, h));
          if (h === 0) shareable = false;
        }
      }
    }
    return shareable ? this.share(h >>> 0, v) : v;
  }

  /** Folds a child into its parent's hash; 0 when the child is an object that is not shared. */
  private mix(c: Json, h: number): number {
    if (c !== null && typeof c === 'object') {
      const ch = this.hashes.get(c);
      return ch === undefined ? 0 : Math.imul(h ^ ch, FNV_PRIME) || 1;
    }
    return hashString(typeof c === 'string' ? c : `\u0000${String(c)}`, Math.imul(h ^ 0x2f, FNV_PRIME)) || 1;
  }

  private share<O extends object>(h: number, v: O): O {
    const known = this.shared.get(h);
    if (known !== undefined) return sameEntries(known, v) ? (known as O) : v;
    this.shared.set(h, Object.freeze(v));
    this.hashes.set(v, h);
    return v;
  }
}
