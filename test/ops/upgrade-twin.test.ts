import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { DATA_LAYOUT } from '../../lambdas/domain/site.js';
import { upgradePlan } from '../../lambdas/domain/upgrade.js';
import { DOMAIN, startScenario } from './scenario.js';

describe('an upgrade onto a stack with data: version N wrote it, version N+1 reads every report equal', () => {
  let s: Awaited<ReturnType<typeof startScenario>>;
  const setSite = (update: string) =>
    s.svc.dynamo.doc.send(
      new UpdateCommand({
        TableName: s.svc.dynamo.table,
        Key: { pk: 'SITES', sk: `SITE#${DOMAIN}` },
        UpdateExpression: update,
      }),
    );

  beforeEach(async () => {
    s = await startScenario();
  }, 120_000);
  afterEach(async () => s.svc.cleanup());

  it('an older layout: 503 from the deploy, then `footfall rebuild` migrates it and every report reads equal', async () => {
    const reference = await s.read();
    await setSite('REMOVE layout');
    const plan = upgradePlan({ version: '0.0.9', layout: 1 }, [await s.site()], {
      version: '0.1.0',
      layout: DATA_LAYOUT,
    });
    expect(plan).toMatchObject({ safe: true, sites: [{ domain: DOMAIN, layout: 1, action: 'rebuild' }] });
    await expect(s.read()).rejects.toThrow(/layout 1 .*`footfall rebuild --site example.com`/);
    expect(await s.rebuild()).toBe(1);
    expect(await s.site()).toMatchObject({
      layout: DATA_LAYOUT,
      generation: 1,
    });
    expect(upgradePlan(null, [await s.site()], { version: '0.1.0', layout: DATA_LAYOUT }).sites[0]?.action).toBe('ok');
    await s.svc.scheduled();
    expect(await s.read()).toEqual(reference);
  }, 120_000);
});
