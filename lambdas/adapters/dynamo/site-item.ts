import { PK, SK } from './table.js';
import { siteConfigSchema, type SiteConfig } from '../../domain/site.js';
import { PARTITIONS } from './items.js';

// All sites share one partition: a self-hosted install has a handful, and the
// ingest path reads them through an in-memory cache.
/** The partition key of the SITE items. */
export const SITES_PK = PARTITIONS.sites.key();
/** The SITE item's sort keys (`docs/data-model.md`, item SITE). */
export const { SITE } = PARTITIONS.sites.items;

/** The key of a site's SITE item. */
export const siteKey = (domain: string) => ({ [PK]: SITES_PK, [SK]: SITE.key(domain) });

/**
 * A SITE item (with or without its keys) as the site's config.
 * @throws ZodError when the item is not a site config
 */
export function siteOfItem(item: Record<string, unknown>): SiteConfig {
  const { [PK]: _pk, [SK]: _sk, ...rest } = item;
  return siteConfigSchema.parse(rest);
}
