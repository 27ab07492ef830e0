import type { NodeImage } from '../../api/types/nodeimage.js';
import { writeDueMs } from '../../daemon/imagepuller/statuswriter.js';
import { foreignStatusWriters, newWrites } from '../../daemon/imagepuller/writers.js';

const entry = (manager: string, time: string, fields: object) => ({ manager, operation: 'Update', apiVersion: 'apps.kruise.io/v1beta1', time, fieldsType: 'FieldsV1', fieldsV1: fields });
const ni = (...managedFields: ReturnType<typeof entry>[]): NodeImage => ({ metadata: { name: 'n1', managedFields } });

describe("a NodeImage status's other writers", () => {
  it('are the managers other than kruise-ts that own status fields, with their last write', () => {
    const writers = foreignStatusWriters(
      ni(
        entry('kruise-ts-daemon', '2026-01-01T10:00:09Z', { 'f:status': {} }),
        entry('kruise-ts-manager', '2026-01-01T10:00:08Z', { 'f:status': {} }),
        entry('kruise-daemon', '2026-01-01T10:00:05Z', { 'f:status': { 'f:desired': {} } }),
        entry('kubectl-edit', '2026-01-01T10:00:07Z', { 'f:spec': {} }),
      ),
    );
    expect(writers).toEqual(new Map([['kruise-daemon', '2026-01-01T10:00:05Z']]));
  });

  it('conflict when they write again after the first sight, not for what they wrote before', () => {
    const before = new Map([['kruise-daemon', '2026-01-01T10:00:05Z']]);
    expect(newWrites(before, before)).toEqual([]);
    expect(newWrites(before, new Map([['kruise-daemon', '2026-01-01T10:00:30Z']]))).toEqual(['kruise-daemon']);
    expect(newWrites(before, new Map([...before, ['another', '2026-01-01T10:00:01Z']]))).toEqual(['another']);
    expect(newWrites(before, new Map())).toEqual([]);
  });
});

describe("when the daemon's NodeImage status write goes out", () => {
  const now = 100_000;
  it('a result at once, within a second while other pulls still run', () => {
    expect(writeDueMs('result', now, now - 1, 5000, false)).toBe(now);
    expect(writeDueMs('result', now, now - 1, 5000, true)).toBe(now + 1000);
  });

  it("a started pull within the progress interval of its start, however long the daemon was quiet, so a pull that ends sooner is one write", () => {
    expect(writeDueMs('started', now, 0, 5000, false)).toBe(now + 5000);
    expect(writeDueMs('started', now, now - 1, 5000, true)).toBe(now + 5000);
    expect(writeDueMs('started', now, 0, 0, false)).toBe(now);
  });

  it('progress at most once per interval since the last write', () => {
    expect(writeDueMs('progress', now, 0, 5000, false)).toBe(now);
    expect(writeDueMs('progress', now, now - 2000, 5000, false)).toBe(now + 3000);
  });
});
