import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFile, readdir } from 'node:fs/promises';
import { spawn } from 'node:child_process';
import { DynamoEmailReportStore } from '../../lambdas/adapters/dynamo/email-report-store.js';
import { dynamoReportServiceDeps } from '../../lambdas/wiring/report-deps.js';
import { relativeChange } from '../../lambdas/domain/reports/overview.js';
import { PARTITIONS } from '../../lambdas/adapters/dynamo/items.js';
import { DynamoSiteDeletionStore } from '../../lambdas/adapters/dynamo/site-deletion-store.js';
import {
  periodSummary,
  sendDueReports,
  type EmailReportDeps,
  type OutgoingMail,
} from '../../lambdas/services/email-reports.js';
import { duePeriod } from '../../lambdas/domain/email-report/period.js';
import { outboxDir } from '../../local/outbox.js';
import { SITE, scenarioService } from '../reports/scenario.js';
import { AppClient, CHEAP_SCRYPT, addUser } from '../support/app-client.js';
import { startTestService } from '../support/local.js';
import { CLI } from '../support/cli.js';
import { main } from '../../cli/main.js';

/** Runs `footfall …` in a child process, without blocking this one (which hosts the server the command attaches to). */
function cli(args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, FOOTFALL_DATA: '', PORT: '' } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += String(d)));
  child.stderr.on('data', (d) => (stderr += String(d)));
  return new Promise((resolve) => child.once('close', (code) => resolve({ status: code ?? -1, stdout, stderr })));
}

/** 2026-04-01 09:00 in Berlin (CEST): the 1st, so March's monthly summary is due; a Wednesday, so no weekly one. */
const APRIL_1 = Date.parse('2026-04-01T07:00:00Z');

/** The text part of a raw message. */
const textOf = (raw: string) => {
  const b64 =
    /Content-Type: text\/plain; charset=UTF-8\r?\nContent-Transfer-Encoding: base64\r?\n\r?\n([A-Za-z0-9+/=\r\n]+?)\r?\n--/.exec(
      raw,
    )![1]!;
  return Buffer.from(b64.replace(/\r?\n/g, ''), 'base64').toString();
};
const header = (raw: string, name: string) =>
  new RegExp(`^${name}: (.*?)\r?$`, 'm').exec(raw.split(/\r?\n\r?\n/)[0]!)?.[1];

describe('email reports on the hand-built scenario', () => {
  let s: Awaited<ReturnType<typeof scenarioService>>;
  let store: DynamoEmailReportStore;
  const outbox: OutgoingMail[] = [];
  let failFor: string | null = null;
  let deps: EmailReportDeps;

  beforeAll(async () => {
    s = await scenarioService();
    store = new DynamoEmailReportStore(s.svc.dynamo);
    await store.setRecipients(
      SITE,
      [
        { email: 'ana@example.com', weekly: false, monthly: true },
        { email: 'bo@example.com', weekly: true, monthly: true },
        { email: 'cy@example.com', weekly: true, monthly: false },
      ],
      APRIL_1,
    );
    deps = {
      reports: dynamoReportServiceDeps(s.svc.dynamo, () => APRIL_1),
      store,
      sender: {
        send: async (mail) => {
          if (mail.to === failFor) throw new Error('SES is down');
          outbox.push(mail);
          return `m-${outbox.length}`;
        },
      },
      from: 'reports@example.com',
      appUrl: 'https://stats.example.com',
    };
  });
  afterAll(async () => s.svc.cleanup());

  it("the summary's figures are the report API's, for the month and the month before", async () => {
    const site = (await deps.reports.sites.getSite(SITE))!;
    const summary = await periodSummary(deps.reports, site, duePeriod('monthly', APRIL_1, site.timezone)!);
    const api = async (path: string) => (await s.get(`/api/v1/sites/${SITE}/${path}`)).json();
    const march = await api('overview?from=2026-03-01&to=2026-03-31');
    const feb = await api('overview?from=2026-02-01&to=2026-02-28');
    expect(summary.range).toEqual(march.range);
    for (const t of summary.totals) {
      expect(t.value, t.key).toBe(march.current[t.key]);
      expect(t.previous, t.key).toBe(feb.current[t.key]);
      expect(t.change, t.key).toBe(relativeChange(march.current[t.key], feb.current[t.key]));
    }
    const channels = await api('breakdown/channel?from=2026-03-01&to=2026-03-31&limit=5');
    const febChannels = await api('breakdown/channel?from=2026-02-01&to=2026-02-28&limit=100');
    const list = summary.lists.find((l) => l.title === 'Top channels')!;
    expect(list.rows.map((r) => [r.label, r.count.value, r.revenue_usd.value])).toEqual(
      channels.rows.map((r: { label: string; visitors: number; revenue_usd: number }) => [
        r.label,
        r.visitors,
        r.revenue_usd,
      ]),
    );
    for (const r of list.rows) {
      const before = febChannels.rows.find((f: { label: string }) => f.label === r.label);
      expect(r.count.previous, r.label).toBe(before?.visitors ?? 0);
      // A channel with no visit in February: null change, as the overview's change is null from 0.
      if (!before?.visitors) expect(r.count.change, r.label).toBeNull();
    }
    const goals = await api('goals?from=2026-03-01&to=2026-03-31&limit=5');
    expect(summary.lists.find((l) => l.title === 'Goals')!.rows.map((r) => [r.label, r.count.value])).toEqual(
      goals.rows.map((g: { goal: string; visitors: number }) => [g.goal, g.visitors]),
    );
    const pages = await api('breakdown/page?from=2026-03-01&to=2026-03-31&limit=5');
    expect(summary.lists.find((l) => l.title === 'Top pages')!.rows.map((r) => r.label)).toEqual(
      pages.rows.map((r: { label: string }) => r.label),
    );
  });

  it('sends the due monthly summary once per address, under retries, concurrent runs and a failed send', async () => {
    failFor = 'bo@example.com';
    const site = (await deps.reports.sites.getSite(SITE))!;
    await expect(sendDueReports(deps, site)).rejects.toThrow('SES is down');
    expect(outbox.map((m) => m.to)).toEqual(['ana@example.com']);
    failFor = null;
    // A retried invocation and a concurrent one: bo (whose send failed) gets it once, ana not again; cy chose weekly only.
    const counts = await Promise.all([sendDueReports(deps, site), sendDueReports(deps, site)]);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(1);
    expect(await sendDueReports(deps, site)).toBe(0);
    expect(outbox.map((m) => m.to)).toEqual(['ana@example.com', 'bo@example.com']);

    const raw = outbox[0]!.raw;
    expect(header(raw, 'Subject')).toBeDefined();
    const text = textOf(raw);
    const march = await (await s.get(`/api/v1/sites/${SITE}/overview?from=2026-03-01&to=2026-03-31`)).json();
    expect(text).toContain(`Unique visitors: ${march.current.visitors} (`);
    expect(text).toContain(`Visits: ${march.current.sessions} (`);
    expect(text).toContain(`Revenue (USD): $${march.current.revenue_usd.toFixed(2)} (`);
    expect(header(raw, 'List-Unsubscribe-Post')).toBe('List-Unsubscribe=One-Click');
    expect(header(raw, 'List-Unsubscribe')).toMatch(/^<https:\/\/stats\.example\.com\/api\/app\/unsubscribe\/[^>]+>$/);
    expect(text).toMatch(/Unsubscribe: https:\/\/stats\.example\.com\/unsubscribe\/\S+/);
  });

  it('one-click unsubscribe (no sign-in, no Origin) removes that address only; a tampered token is 404', async () => {
    const raw = outbox.find((m) => m.to === 'bo@example.com')!.raw;
    const token = /\/api\/app\/unsubscribe\/([^>]+)>/.exec(header(raw, 'List-Unsubscribe')!)![1]!;
    const post = (t: string) =>
      fetch(`${s.svc.url}/api/app/unsubscribe/${t}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'List-Unsubscribe=One-Click',
      });
    const tampered = token.slice(0, -2) + (token.at(-2) === 'A' ? 'B' : 'A') + token.at(-1);
    expect((await post(tampered)).status).toBe(404);
    expect((await store.recipients(SITE))!.recipients).toHaveLength(3);
    const res = await post(token);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ site: SITE, removed: true });
    expect((await store.recipients(SITE))!.recipients.map((r) => r.email)).toEqual([
      'ana@example.com',
      'cy@example.com',
    ]);
    expect(await (await post(token)).json()).toEqual({ site: SITE, removed: false });
  });

  it(
    'footfall reports preview prints the summary of the month before --on, from the same figures',
    { timeout: 120_000 },
    async () => {
      const base = ['--data', s.svc.dataDir, 'reports', 'preview', SITE, '--period', 'month', '--on', '2026-04-01'];
      const [text, eml] = await Promise.all([cli(base), cli([...base, '--format', 'eml', '--to', 'ana@example.com'])]);
      expect(text.status, text.stderr).toBe(0);
      const march = await (await s.get(`/api/v1/sites/${SITE}/overview?from=2026-03-01&to=2026-03-31`)).json();
      expect(text.stdout).toContain('Subject: Monthly report for shop.test: March 2026');
      expect(text.stdout).toContain(`Unique visitors: ${march.current.visitors} (`);
      expect(text.stdout).toContain(`Pageviews: ${march.current.pageviews} (`);
      expect(text.stdout).toContain(`Unsubscribe: ${s.svc.url}/unsubscribe/`);
      expect(header(eml.stdout, 'To')).toBe('ana@example.com');
      expect(textOf(eml.stdout)).toContain(`Visits: ${march.current.sessions} (`);
      // Refused before any store is opened (so in this process): exit code 2.
      expect(await main([...base.slice(0, 5), '--period', 'year'])).toBe(2);
    },
  );

  it('settings: an owner reads and sets the list, a member reads but may not set it, a bad address is 400 naming the field', async () => {
    await addUser(s.svc.dynamo, 'own@acme.test', 'acme', 'own-password-1', CHEAP_SCRYPT);
    await addUser(s.svc.dynamo, 'mem@acme.test', 'acme', 'mem-password-1', CHEAP_SCRYPT, 'member');
    const owner = new AppClient(s.svc.url);
    const member = new AppClient(s.svc.url);
    expect((await owner.signIn('own@acme.test', 'own-password-1')).status).toBe(200);
    expect((await member.signIn('mem@acme.test', 'mem-password-1')).status).toBe(200);
    const path = `/api/app/sites/${SITE}/email-reports`;
    const list = [{ email: 'Dee@Example.com', weekly: true, monthly: false }];
    const put = await owner.call('PUT', path, { recipients: list });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({
      enabled: true,
      disabled_reason: null,
      from: 'reports@footfall.localhost',
      max_recipients: 10,
      recipients: [{ email: 'dee@example.com', weekly: true, monthly: false }],
    });
    expect((await member.call('GET', path)).body).toEqual(put.body);
    expect(await member.call('PUT', path, { recipients: [] })).toMatchObject({ status: 403 });
    expect(
      await owner.call('PUT', path, { recipients: [{ email: 'not-an-address', weekly: true, monthly: true }] }),
    ).toMatchObject({
      status: 400,
      body: { field: 'recipients', error: 'Enter an email address such as ana@example.com.' },
    });
    const eleven = Array.from({ length: 11 }, (_, i) => ({ email: `r${i}@example.com`, weekly: true, monthly: true }));
    expect(await owner.call('PUT', path, { recipients: eleven })).toMatchObject({
      status: 400,
      body: { field: 'recipients', error: 'At most 10 recipients per site.' },
    });
    expect((await owner.call('PUT', '/api/app/sites/rival.test/email-reports', { recipients: [] })).status).toBe(404);
    expect((await store.recipients(SITE))!.recipients.map((r) => r.email)).toEqual(['dee@example.com']);
  });
});

describe('the local twin: the scheduled run writes due reports to the outbox folder', () => {
  it('on a Monday at 09:00 site-local, one .eml per weekly recipient, once', async () => {
    const monday = Date.parse('2026-11-23T09:00:00Z');
    const svc = await startTestService([{ domain: 'mail.test', timezone: 'UTC' }], {
      app: true,
      clock: () => monday,
      sessionizeIntervalMs: 0,
    });
    try {
      await new DynamoEmailReportStore(svc.dynamo).setRecipients(
        'mail.test',
        [{ email: 'ana@example.com', weekly: true, monthly: true }],
        monday,
      );
      expect((await svc.scheduled()).mailed).toBe(1);
      expect((await svc.scheduled()).mailed).toBe(0);
      const files = await readdir(outboxDir(svc.dataDir));
      expect(files).toHaveLength(1);
      const raw = await readFile(`${outboxDir(svc.dataDir)}/${files[0]}`, 'utf8');
      expect(header(raw, 'From')).toBe('reports@footfall.localhost');
      expect(header(raw, 'List-Unsubscribe')).toContain(`${svc.url}/api/app/unsubscribe/`);
      expect(textOf(raw)).toContain('Weekly report for mail.test');
      expect(textOf(raw)).toContain('16 Nov 2026 – 22 Nov 2026');
      expect(PARTITIONS.emailReports.key('mail.test')).toBe('EMAILREPORTS#mail.test');
      // Deleting the site deletes its recipients and send markers with its other configuration.
      await new DynamoSiteDeletionStore(svc.dynamo).removeSite('mail.test');
      expect(await new DynamoEmailReportStore(svc.dynamo).recipients('mail.test')).toBeNull();
    } finally {
      await svc.cleanup();
    }
  });
});
