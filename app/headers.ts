/**
 * How the app's static files are served, in one place for the local server
 * and for CloudFront (docs/app.md "Serving the app"): the security headers of
 * every response and the cache policy of each kind of file.
 */

/**
 * Content-Security-Policy of the app (CSP Level 3): only our own scripts,
 * styles and API; images from us or `data:` (the favicon); no plugins, no
 * `<base>` tricks, forms only to us, and no framing (clickjacking, OWASP
 * Clickjacking Defense Cheat Sheet). Vite emits no inline script or style.
 */
export const APP_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** HSTS for two years with subdomains (RFC 6797); sent only over HTTPS, where it means something. */
export const APP_HSTS = 'max-age=63072000; includeSubDomains';

/** The security headers of every app response; `https` adds HSTS (never on the local server's http). */
export function appSecurityHeaders(https: boolean): Record<string, string> {
  return {
    'content-security-policy': APP_CSP,
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'referrer-policy': 'same-origin',
    'cross-origin-opener-policy': 'same-origin',
    'permissions-policy': 'camera=(), microphone=(), geolocation=(), payment=()',
    ...(https ? { 'strict-transport-security': APP_HSTS } : {}),
  };
}

/** Vite's hashed build output (`/assets/<name>-<hash>.<ext>`): its name changes with its content, so it is cached for a year. */
export const HASHED_ASSET = /^\/assets\/.+-[A-Za-z0-9_-]{8,}\.[a-z0-9]+$/;
export const IMMUTABLE_CACHE = 'public, max-age=31536000, immutable';
/** index.html and anything unhashed: revalidated on every load, so a new deploy is seen at once. */
export const REVALIDATE_CACHE = 'no-cache';
