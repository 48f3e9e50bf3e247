import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { SesMailSender } from '../../lambdas/adapters/ses-mail-sender.js';
import { LOCAL_REPORT_SENDER, outboxDir, outboxSender } from '../../local/outbox.js';
import { loadPolicies } from '../../local/iam/policies.js';
import { usePolicies } from '../../local/iam/authorizer.js';

/**
 * Report mails go out through the stack's configuration set (`lib/report-mail.ts`), which
 * suppresses addresses that bounce or complain: SES sees its name on every send, and the twin,
 * like IAM, refuses a send its policy does not allow on that set.
 */

const mail = { from: LOCAL_REPORT_SENDER, to: 'ana@example.com', raw: 'Subject: hi\r\n\r\nhello\r\n' };

describe('SesMailSender', () => {
  it('names the configuration set on every SendEmail, with the raw message from the sender', async () => {
    const ses = mockClient(SESv2Client);
    ses.on(SendEmailCommand).resolves({ MessageId: 'm-1' });
    const sender = new SesMailSender('Footfall-reports', new SESv2Client({ region: 'us-east-1' }));
    expect(await sender.send(mail)).toBe('m-1');
    const input = ses.commandCalls(SendEmailCommand)[0]!.args[0].input;
    expect(input).toMatchObject({
      ConfigurationSetName: 'Footfall-reports',
      FromEmailAddress: LOCAL_REPORT_SENDER,
      Destination: { ToAddresses: ['ana@example.com'] },
    });
    expect(Buffer.from(input.Content!.Raw!.Data!).toString()).toBe(mail.raw);
    ses.restore();
  });
});

describe('the local SES stand-in', () => {
  let dir: string | undefined;
  afterEach(async () => {
    usePolicies(undefined);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('sends with the synthesized policy, and is denied once the configuration set is taken out of it', async () => {
    dir = await mkdtemp(join(tmpdir(), 'ff-outbox-'));
    await outboxSender(dir, 'scheduled').send(mail);
    expect(await readdir(outboxDir(dir))).toHaveLength(1);

    const policies = structuredClone(loadPolicies());
    let removed = 0;
    for (const statement of policies.scheduled ?? []) {
      const kept = statement.Resource.filter((r) => !r.includes(':configuration-set/'));
      removed += statement.Resource.length - kept.length;
      statement.Resource = kept;
    }
    expect(removed).toBe(1);
    usePolicies(policies);
    await expect(outboxSender(dir, 'scheduled').send(mail)).rejects.toThrow(/ses:SendEmail/);
    expect(await readdir(outboxDir(dir))).toHaveLength(1);
  });
});
