import { componentLogger, rootLogger } from '../../kube/log.js';

/** Metadata that counts how often the JSON format serialised it. */
function probe(): { meta: { probe: { toJSON: () => string } }; calls: () => number } {
  let n = 0;
  return {
    meta: {
      probe: {
        toJSON: () => {
          n++;
          return 'probe';
        },
      },
    },
    calls: () => n,
  };
}

describe('log levels', () => {
  // The transport stays quiet; the format, which serialises, runs before it either way.
  beforeEach(() => {
    for (const t of rootLogger().transports) t.silent = true;
  });
  afterEach(() => {
    rootLogger('info');
    for (const t of rootLogger().transports) t.silent = false;
  });

  it('does not serialise a message below the level, in children of children too', () => {
    rootLogger('warn');
    const log = componentLogger('test').child({ nodeImage: 'n1' });
    const p = probe();
    log.info('below', p.meta);
    log.debug('below', p.meta);
    expect(p.calls()).toBe(0);
    log.warn('at', p.meta);
    expect(p.calls()).toBe(1);
  });

  it('follows a level changed after the logger was made', () => {
    const log = componentLogger('test');
    rootLogger('error');
    const p = probe();
    log.warn('below', p.meta);
    expect(p.calls()).toBe(0);
    rootLogger('debug');
    log.debug('at', p.meta);
    expect(p.calls()).toBe(1);
  });
});
