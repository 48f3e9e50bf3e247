import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { DynamoErasureStore } from '../../lambdas/adapters/dynamo/erasure-store.js';
import { erasePerson, type ErasureDeps } from '../../lambdas/services/erasure.js';
import { LocalArchiveEraser } from '../../local/archive-eraser.js';
import { localPaths } from '../../local/service.js';
import { runSql } from '../../local/sql.js';
import { scanAll } from '../support/dynamo.js';
import { DOMAIN, startScenario } from './scenario.js';

describe('erasing a person: no trace in items, timelines or the archive; every money total unchanged', () => {
  let s: Awaited<ReturnType<typeof startScenario>>;
  const archived = async (visitor: string) =>
    Number(
      (await runSql(localPaths(s.svc.dataDir).archive, `SELECT count(*) FROM events WHERE visitor_id = '${visitor}'`))
        .rows[0]![0],
    );

  beforeEach(async () => {
    s = await startScenario();
  }, 120_000);
  afterEach(async () => s.svc.cleanup());

  function deps(): ErasureDeps {
    let n = 0;
    return {
      sites: new DynamoConfigStore(s.svc.dynamo),
      store: new DynamoErasureStore(s.svc.dynamo),
      archive: new LocalArchiveEraser(localPaths(s.svc.dataDir).archive),
      rebuild: (domain) => s.rebuild(domain),
      clock: s.clock,
      pseudonym: () => `erased_${++n}`,
    };
  }
  const money = (r: Awaited<ReturnType<typeof s.read>>) => ({
    payments: r.payments.rows.map((p) => [p.provider_payment_id, p.amount_usd, p.net_usd]).sort(),
    // The money; not what depends on the person's visits (matched: credited to a visit; per visitor).
    totals: Object.fromEntries(
      Object.entries(r.overview.current).filter(
        ([k]) => /revenue|payment|usd/i.test(k) && !/matched|per_visitor/.test(k),
      ),
    ),
  });

  it('by customer id: the customer and their visitor are gone everywhere, the money stays', async () => {
    const before = await s.read();
    expect(before.overview.current).toMatchObject({ visitors: 3, payments: 3 });
    expect(await archived('visitor-0001')).toBe(8);
    const record = await erasePerson(deps(), DOMAIN, { kind: 'customer', id: 'cus_1' });
    expect(record).toMatchObject({ kind: 'customer', visitors: 1, payments: 2, archive_events: 8, generation: 1 });
    const items = JSON.stringify(await scanAll(s.svc.dynamo));
    expect(items).not.toContain('cus_1');
    expect(items).not.toContain('visitor-0001');
    expect(items).toContain('visitor-0002');
    expect(await archived('visitor-0001')).toBe(0);
    expect(await archived('visitor-0002')).toBe(8);
    const after = await s.read();
    expect(money(after)).toEqual(money(before));
    expect(Object.keys(money(before).totals).length).toBeGreaterThan(0);
    expect(after.overview.current).toMatchObject({ visitors: 2, payments: 3 });
    expect(after.timelines[0]).not.toEqual(before.timelines[0]);
    expect(JSON.stringify({ ...after, timelines: [] })).not.toContain('visitor-0001');
    // Their timeline (asked for by id) is empty: no visit, no payment.
    expect(JSON.stringify(after.timelines[0])).not.toMatch(/pi_1|in_3|"path"/);
    expect(JSON.stringify(before.timelines[0])).toMatch(/pi_1/);
    // Logged: the audit record holds counts, not the person.
    const audit = (await scanAll(s.svc.dynamo)).filter((i) => i.type === 'ERASURE');
    expect(audit).toHaveLength(1);
    expect(JSON.stringify(audit)).not.toMatch(/cus_1|visitor-0001/);
  }, 120_000);

  it('by visitor id: a visitor without payments; the others and all payments unchanged', async () => {
    const before = await s.read();
    const record = await erasePerson(deps(), DOMAIN, { kind: 'visitor', id: 'visitor-0003' });
    expect(record).toMatchObject({ visitors: 1, payments: 0, customers: 0 });
    expect(JSON.stringify(await scanAll(s.svc.dynamo))).not.toContain('visitor-0003');
    expect(await archived('visitor-0003')).toBe(0);
    const after = await s.read();
    expect(money(after)).toEqual(money(before));
    expect(after.overview.current).toMatchObject({ visitors: 2 });
    expect(after.payments.rows.map((p) => p.touch?.channel ?? null)).toEqual(
      before.payments.rows.map((p) => p.touch?.channel ?? null),
    );
  }, 120_000);
});
