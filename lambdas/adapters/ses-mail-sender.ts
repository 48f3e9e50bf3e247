import { SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';
import type { MailSender, OutgoingMail } from '../services/email-reports.js';

/**
 * Email reports through Amazon SES (API v2 `SendEmail` with a raw MIME message, so the
 * `List-Unsubscribe` headers go out as written): from the stack's verified sender
 * (`-c reportSender=`), through the stack's configuration set `configurationSet` (it suppresses
 * addresses that bounce or complain), which the function's policy allows and nothing else
 * (`lib/report-mail.ts`). In Lambda the runtime's SDK (bundles leave `@aws-sdk/*` external).
 */
export class SesMailSender implements MailSender {
  constructor(
    private readonly configurationSet: string,
    private readonly client: SESv2Client = new SESv2Client({ maxAttempts: 3 }),
  ) {}

  /** @throws the SDK's error (e.g. `MessageRejected` for an unverified recipient in the sandbox) */
  async send(mail: OutgoingMail): Promise<string> {
    const { MessageId } = await this.client.send(
      new SendEmailCommand({
        FromEmailAddress: mail.from,
        ConfigurationSetName: this.configurationSet,
        Destination: { ToAddresses: [mail.to] },
        Content: { Raw: { Data: Buffer.from(mail.raw) } },
      }),
    );
    return MessageId ?? '';
  }
}
