import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { DynamoConnection } from './client.js';
import { PK } from './table.js';
import { DATA_LAYOUT, type SiteConfig } from '../../domain/site.js';
import { NotFoundError } from '../../domain/errors.js';
import type { SiteDirectory, SiteGenerations } from '../../ports.js';
import { siteKey, siteOfItem } from './site-item.js';

/** A rebuild step found the SITE item in another state than the one it starts from (`docs/rebuild.md`). */
export class GenerationConflictError extends Error {
  constructor(
    readonly domain: string,
    readonly expected: string,
    readonly site: SiteConfig,
  ) {
    const state = [
      `live generation ${site.generation ?? 0}`,
      site.building !== undefined ? `generation ${site.building} being built` : null,
      site.retired !== undefined ? `generation ${site.retired} retired, not yet deleted` : null,
    ]
      .filter(Boolean)
      .join(', ');
    super(`${domain}: expected ${expected}, found ${state}`);
  }
}

/** One step's write on the SITE item: its update, the state it starts from (`condition`, and in words `expected`). */
interface GenerationStep {
  update: string;
  condition: string;
  values: Record<string, number | boolean>;
  expected: string;
}

/** The generation steps a rebuild takes (`docs/rebuild.md`), each for the generation it moves. */
const STEPS: Readonly<Record<keyof Omit<SiteGenerations, keyof SiteDirectory>, (g: number) => GenerationStep>> = {
  beginBuilding: (g) => ({
    update: 'SET building = :g',
    condition: 'attribute_not_exists(building) AND attribute_not_exists(retired)',
    values: { ':g': g },
    expected: 'no rebuild running and none to clean up',
  }),
  // The generation was written by this code: its layout is this release's (`DATA_LAYOUT`).
  switchGeneration: (g) => ({
    update: 'SET retired = if_not_exists(generation, :zero), generation = :g, layout = :layout REMOVE building',
    condition: 'building = :g AND attribute_not_exists(retired)',
    values: { ':g': g, ':zero': 0, ':layout': DATA_LAYOUT },
    expected: `generation ${g} being built`,
  }),
  abandonBuilding: (g) => ({
    update: 'SET retired = :g REMOVE building',
    condition: 'building = :g AND attribute_not_exists(retired)',
    values: { ':g': g },
    expected: `generation ${g} being built`,
  }),
  clearRetired: (g) => ({
    update: 'REMOVE retired',
    condition: 'retired = :g',
    values: { ':g': g },
    expected: `generation ${g} retired`,
  }),
};

/**
 * The generation fields of the SITE item a rebuild moves through (`docs/rebuild.md`): building, live,
 * retired. `sites` reads the item back to say what state it was in when a step is refused.
 */
export class DynamoSiteGenerations implements Omit<SiteGenerations, keyof SiteDirectory> {
  constructor(
    private readonly conn: DynamoConnection,
    private readonly sites: Pick<SiteDirectory, 'getSite'>,
  ) {}

  /**
   * One conditional write on the SITE item (`docs/rebuild.md`): the
   * generation fields a rebuild moves through. Each returns the site as
   * written, or throws GenerationConflictError when the item is not in the
   * state the step starts from (another rebuild, a finished or abandoned one).
   */
  private async generationStep(
    domain: string,
    { update, condition, values, expected }: GenerationStep,
  ): Promise<SiteConfig> {
    try {
      const { Attributes } = await this.conn.doc.send(
        new UpdateCommand({
          TableName: this.conn.table,
          Key: siteKey(domain),
          UpdateExpression: update,
          ConditionExpression: `attribute_exists(${PK}) AND ${condition}`,
          ...(Object.keys(values).length > 0 ? { ExpressionAttributeValues: values } : {}),
          ReturnValues: 'ALL_NEW',
        }),
      );
      return siteOfItem(Attributes ?? {});
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      const site = await this.sites.getSite(domain);
      if (!site) throw new NotFoundError(`site ${domain} does not exist`);
      throw new GenerationConflictError(domain, expected, site);
    }
  }

  /** Marks `generation` as being built: refused while another one is built or a replaced one awaits deletion. */
  beginBuilding(domain: string, generation: number): Promise<SiteConfig> {
    return this.generationStep(domain, STEPS.beginBuilding(generation));
  }

  /**
   * Makes the built generation live and the live one retired, in one write:
   * readers read the old generation before it and the new one after.
   */
  switchGeneration(domain: string, generation: number): Promise<SiteConfig> {
    return this.generationStep(domain, STEPS.switchGeneration(generation));
  }

  /** Gives up the generation being built: no writer writes it any more, and it is left to be deleted as `retired`. */
  abandonBuilding(domain: string, generation: number): Promise<SiteConfig> {
    return this.generationStep(domain, STEPS.abandonBuilding(generation));
  }

  /** Forgets the retired generation once its items are deleted. */
  clearRetired(domain: string, generation: number): Promise<SiteConfig> {
    return this.generationStep(domain, STEPS.clearRetired(generation));
  }
}
