/**
 * The JSON lines of a winston log, read while the process may still be writing it: a line not yet
 * ended (a half-written last line, or a pipe chunk cut mid-line) is left out rather than failing
 * the test with a parse error in place of its real result.
 */
export function logEntries(text: string): Record<string, unknown>[] {
  return text.split('\n').flatMap((line) => (line.startsWith('{') && line.endsWith('}') ? [JSON.parse(line) as Record<string, unknown>] : []));
}
