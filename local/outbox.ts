import { mkdir, writeFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { MailSender, OutgoingMail } from '../lambdas/services/email-reports.js';
import { demand, type Principal } from './iam/stand-ins.js';
import { LOCAL_REPORT_CONFIGURATION_SET, LOCAL_REPORT_SENDER, sesIdentityArns } from './iam/authorizer.js';

/** The outbox folder of a data directory: one `.eml` file per mail the local twin "sent". */
export const outboxDir = (dataDir: string) => join(dataDir, 'outbox');

export { LOCAL_REPORT_SENDER };

/**
 * The local stand-in of SES for function `name`: asks the twin's IAM for `ses:SendEmail` on the
 * sender's identities (the address's identity or its domain's: "Identity and access management
 * in Amazon SES") and on the stack's configuration set, which every send names
 * (`lambdas/adapters/ses-mail-sender.ts`), as SES authorizes it, then writes the raw message, as SES would
 * send it, to `<dataDir>/outbox/<time>-<id>.eml`, which any mail client opens.
 * @throws AccessDeniedException when the function's policy allows neither identity, or not the configuration set
 */
export function outboxSender(dataDir: string, name: Principal): MailSender {
  return {
    send: async (mail: OutgoingMail) => {
      const [address, domain] = sesIdentityArns(mail.from);
      try {
        demand(name, 'ses:SendEmail', address);
      } catch {
        demand(name, 'ses:SendEmail', domain);
      }
      demand(name, 'ses:SendEmail', LOCAL_REPORT_CONFIGURATION_SET);
      const id = createHash('sha256').update(mail.raw).digest('hex').slice(0, 16);
      await mkdir(outboxDir(dataDir), { recursive: true });
      await writeFile(join(outboxDir(dataDir), `${Date.now()}-${id}.eml`), mail.raw);
      return `local-${id}`;
    },
  };
}
