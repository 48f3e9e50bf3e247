/** Methods that change state and so must pass the origin check (RFC 9110 §9.2.1: the others are safe). */
const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export interface OriginCheckInput {
  method: string;
  /** The request's `Origin` header (RFC 6454), if any. */
  origin: string | undefined;
  /** The request's `Sec-Fetch-Site` header (Fetch Metadata), if any. */
  secFetchSite: string | undefined;
  /** Hosts (`host[:port]`, lowercase) this service answers on: the `Host` and `X-Forwarded-Host` of the request and the configured app origins. */
  hosts: readonly string[];
}

/**
 * The CSRF check of a request carrying the session cookie (OWASP CSRF
 * Prevention Cheat Sheet, "Fetch Metadata headers" and "Verifying Origin With
 * Standard Headers"): a safe method passes. Otherwise a browser's
 * `Sec-Fetch-Site` decides when sent (only `same-origin` passes: a page
 * cannot forge it, and it holds behind CloudFront, where the `Host` the
 * function sees is the API's); without it, `Origin` must name one of our
 * hosts; a request with neither header is refused, as the cheat sheet
 * recommends (every browser sends `Origin` on a POST; curl must add it).
 * Returns null when the request passes, else the reason.
 */
export function originProblem(input: OriginCheckInput): string | null {
  if (!UNSAFE_METHODS.has(input.method.toUpperCase())) return null;
  const site = input.secFetchSite?.trim().toLowerCase();
  if (site) return site === 'same-origin' ? null : `a ${site} request may not change anything`;
  if (!input.origin) return 'the Origin header is missing';
  let host: string;
  try {
    const url = new URL(input.origin);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'the Origin is not a web origin';
    host = url.host.toLowerCase();
  } catch {
    return 'the Origin header is not an origin';
  }
  return input.hosts.some((h) => h.toLowerCase() === host) ? null : `the Origin ${input.origin} is not this site`;
}

/** The origin (`scheme://host[:port]`, lowercase, default port dropped) of a URL or origin, or null when it is not a web one. */
export function webOrigin(value: string): string | null {
  try {
    const url = new URL(value.trim());
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.origin.toLowerCase() : null;
  } catch {
    return null;
  }
}

/**
 * The MCP transport's DNS-rebinding check (MCP specification, Transports,
 * Streamable HTTP, "Security Warning": servers must validate the `Origin`
 * header of every request, and answer 403 to one whose Origin is present and
 * not allowed): a request without `Origin` passes (MCP clients that are not
 * browsers send none, and a browser always sends it on a cross-origin POST);
 * one with an `Origin` passes only when it is one of `allowed` (web origins
 * as `webOrigin` gives them). `null` and malformed origins never pass.
 * Returns null when the request passes, else the reason.
 */
export function mcpOriginProblem(origin: string | undefined, allowed: readonly string[]): string | null {
  if (origin === undefined) return null;
  const normalized = webOrigin(origin);
  return normalized !== null && allowed.includes(normalized)
    ? null
    : `the Origin ${origin.slice(0, 200)} may not use this MCP endpoint`;
}

/** The allowed origins of a comma-separated list (the `APP_ORIGINS` variable); entries that are not web origins are dropped. */
export function originList(list: string | undefined): string[] {
  return (list ?? '')
    .split(',')
    .map(webOrigin)
    .filter((o): o is string => o !== null);
}
