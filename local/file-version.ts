import { statSync } from 'node:fs';

/** A file's version as `<path>:<size>:<mtime ms>` (`0:0` when it is absent), to key what was computed from it. */
export function fileVersion(path: string): string {
  const stat = statSync(path, { throwIfNoEntry: false });
  return `${path}:${stat?.size ?? 0}:${stat?.mtimeMs ?? 0}`;
}
