/** Plain-text table with columns padded to their widest cell (kubectl's style). */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]): string => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('   ').trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

export function age(created: string | Date | undefined): string {
  if (!created) return '<unknown>';
  const s = Math.max(0, Math.floor((Date.now() - new Date(created).getTime()) / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.floor(s / 60)}m`;
  if (s < 172800) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

const BAR_WIDTH = 20;

/** A progress bar of BAR_WIDTH cells for 0-100; an empty bar and "?" when it cannot be known. */
export function bar(percent: number | undefined): string {
  if (percent === undefined) return `[${'.'.repeat(BAR_WIDTH)}]    ?`;
  const p = Math.max(0, Math.min(100, Math.round(percent)));
  const full = Math.round((p / 100) * BAR_WIDTH);
  return `[${'#'.repeat(full)}${'.'.repeat(BAR_WIDTH - full)}] ${String(p).padStart(3)}%`;
}
