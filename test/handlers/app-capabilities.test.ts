import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppClient, CHEAP_SCRYPT, addUser } from '../support/app-client.js';
import { startTestService } from '../support/local.js';

/**
 * What the deployment answers, told to the app (`docs/app.md`, "What the deployment answers"): with the filtered
 * engine (locally by default; in AWS unless `-c filteredReports=false`) and without it, `GET /api/app/me`, the sign-in's
 * answer and an opened shared link say `capabilities.filtered_reports`, and the report API agrees: `filters` and the
 * properties reports are answered, or refused with the 400 that names the flag.
 */

const ANA = { email: 'ana@acme.test', password: 'ana-password-1' };
const SITE = 'example.com';
const FILTERS = encodeURIComponent(JSON.stringify([['is', 'visit:channel', ['Search']]]));

describe.each([
  { filteredReports: true, report: 200 },
  { filteredReports: false, report: 400 },
])('a deployment with filtered reports $filteredReports', ({ filteredReports, report }) => {
  let svc: Awaited<ReturnType<typeof startTestService>>;
  let ana: AppClient;
  let signedIn: unknown;

  beforeAll(async () => {
    svc = await startTestService([{ domain: SITE }], { app: true, sessionizeIntervalMs: 0, filteredReports });
    await addUser(svc.dynamo, ANA.email, 'acme', ANA.password, CHEAP_SCRYPT);
    ana = new AppClient(svc.url);
    const res = await ana.signIn(ANA.email, ANA.password);
    expect(res.status).toBe(200);
    signedIn = res.body;
  }, 60_000);
  afterAll(() => svc.cleanup());

  it('says so in who is signed in, from the sign-in on', async () => {
    expect(signedIn).toMatchObject({ capabilities: { filtered_reports: filteredReports } });
    const me = await ana.call('GET', '/api/app/me');
    expect(me.body).toEqual(signedIn);
  });

  it('says so to a shared link, which reads no account', async () => {
    const created = await ana.call('POST', `/api/app/sites/${SITE}/shares`, { name: 'Board' });
    expect(created.status).toBe(201);
    const token = /#auth=(.+)$/.exec((created.body as { url: string }).url)![1]!;
    const opened = await new AppClient(svc.url).call('POST', '/api/app/shared', { token });
    expect(opened.status).toBe(200);
    expect(opened.body).toEqual({
      site: { domain: SITE, timezone: 'Europe/Berlin' },
      name: 'Board',
      password_required: false,
      unlocked: true,
      capabilities: { filtered_reports: filteredReports },
    });
  });

  it('and the report API answers filters and properties as the capability says', async () => {
    const base = `/api/v1/sites/${SITE}`;
    for (const path of [
      `${base}/overview?range=30d&filters=${FILTERS}`,
      `${base}/properties?range=30d`,
      `${base}/breakdown/prop:plan?range=30d`,
    ]) {
      const res = await ana.call('GET', path);
      expect(res.status, path).toBe(report);
      if (report === 400) expect((res.body as { error: string }).error, path).toMatch(/filteredReports=false/);
    }
    // The unfiltered reports are answered either way.
    expect((await ana.call('GET', `${base}/overview?range=30d`)).status).toBe(200);
  });
});
