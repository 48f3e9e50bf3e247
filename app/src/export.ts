/**
 * CSV exports of whole reports (docs/app.md "CSV export"): the report API's
 * own CSV (`format=csv`, docs/api.md "CSV export") asked page by page and
 * joined into one file, so an export holds every row of the range, not the
 * rows on screen.
 */
import { ApiError } from './api.js';

/** The payments API's largest page (`docs/api.md` "Limits": `limit` up to 200). */
export const EXPORT_PAGE_SIZE = 200;

/** The body of a CSV page without its header record: the header has no quoted line break, so it ends at the first CRLF. */
export function withoutHeader(csv: string): string {
  const end = csv.indexOf('\r\n');
  return end < 0 ? '' : csv.slice(end + 2);
}

/** The file name of a `Content-Disposition: attachment; filename="…"` header (RFC 6266), else `fallback`. */
export function attachmentName(header: string | null, fallback: string): string {
  const m = header ? /filename="([^"]+)"/.exec(header) : null;
  return m?.[1] ?? fallback;
}

/**
 * Downloads every page of a paged CSV report as one file: `pageUrl(limit,
 * offset)` for offsets 0, `pageSize`, … below `total`, one request at a time
 * (the server's load stays that of one reader); every page after the first
 * drops its header. The pages are kept as parts of a Blob, never joined into
 * one string, so the browser may hold a large export on disk. `onProgress`
 * gets the rows asked so far. Throws `ApiError` on a failed page, and then
 * saves nothing.
 */
export async function exportPages(options: {
  pageUrl(limit: number, offset: number): string;
  total: number;
  pageSize?: number;
  fallbackName: string;
  onProgress?(rows: number): void;
}): Promise<void> {
  const size = options.pageSize ?? EXPORT_PAGE_SIZE;
  const parts: BlobPart[] = [];
  let name = options.fallbackName;
  for (let offset = 0; offset === 0 || offset < options.total; offset += size) {
    const res = await fetch(options.pageUrl(size, offset), { credentials: 'same-origin' }).catch(() => null);
    if (!res) throw new ApiError(0, 'The server could not be reached. Check your connection and try again.');
    const text = await res.text();
    if (!res.ok) {
      const body = (() => {
        try {
          return JSON.parse(text) as { error?: string };
        } catch {
          return {};
        }
      })();
      throw new ApiError(res.status, body.error ?? `The server answered ${res.status}.`);
    }
    if (offset === 0) name = attachmentName(res.headers.get('content-disposition'), name);
    parts.push(offset === 0 ? text : withoutHeader(text));
    options.onProgress?.(Math.min(options.total, offset + size));
  }
  saveBlob(new Blob(parts, { type: 'text/csv;charset=utf-8' }), name);
}

/** Saves a Blob under `name` through a temporary object URL (the HTML `download` attribute). */
function saveBlob(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.style.display = 'none';
  document.body.append(a);
  a.click();
  a.remove();
  // The download has taken its copy once click() returns; a minute leaves room for a slow disk.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
