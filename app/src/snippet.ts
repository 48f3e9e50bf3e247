/**
 * The install line for a site (`docs/tracking.md` "Install"): shown on a new site's dashboard and in its
 * settings, so it lives apart from both pages' code (each is a chunk of its own, `docs/app.md` "What loads first").
 */
export function snippet(domain: string, origin = location.origin): string {
  return `<script defer src="${origin}/v.js" data-site="${domain}"></script>`;
}
