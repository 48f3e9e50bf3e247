import { createHash } from 'node:crypto';

/** What a mail is made of. Header values are ours or validated addresses: no CR or LF can reach them. */
export interface MailParts {
  from: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  /** Extra headers, e.g. `List-Unsubscribe` (RFC 2369) and `List-Unsubscribe-Post` (RFC 8058). */
  headers: ReadonlyArray<readonly [string, string]>;
  /** Sending time, ms since the epoch (the `Date` header, RFC 5322 §3.6.1). */
  date: number;
}

/** Header text as RFC 2047 encoded-words (UTF-8, base64) when it is not plain printable ASCII. */
function encodeWords(value: string): string {
  if (/^[\x20-\x7e]*$/.test(value)) return value;
  // Each encoded-word at most 75 characters (RFC 2047 §2): 45 bytes of UTF-8 → 60 of base64, split on characters.
  const words: string[] = [];
  let chunk = '';
  for (const ch of value) {
    if (Buffer.byteLength(chunk + ch) > 45) {
      words.push(chunk);
      chunk = '';
    }
    chunk += ch;
  }
  if (chunk) words.push(chunk);
  return words.map((w) => `=?UTF-8?B?${Buffer.from(w).toString('base64')}?=`).join('\r\n ');
}

/** A body part in base64, lines of 76 characters (RFC 2045 §6.8). */
const base64Lines = (s: string) =>
  (
    Buffer.from(s)
      .toString('base64')
      .match(/.{1,76}/g) ?? []
  ).join('\r\n');

/**
 * The mail as a MIME message (RFC 5322, RFC 2045-2046): a `multipart/alternative` of the plain text
 * then the HTML (the last is preferred, RFC 2046 §5.1.4), both UTF-8 in base64, CRLF line ends.
 * What SES sends as the raw message, and what the local outbox writes as an `.eml` file.
 */
export function mimeMessage(parts: MailParts): string {
  const digest = createHash('sha256').update(`${parts.to}\n${parts.subject}\n${parts.date}`).digest('hex');
  const boundary = `ff-${digest.slice(0, 24)}`;
  const domain = parts.from.split('@')[1] ?? 'localhost';
  const headers: Array<readonly [string, string]> = [
    ['From', parts.from],
    ['To', parts.to],
    ['Subject', encodeWords(parts.subject)],
    ['Date', new Date(parts.date).toUTCString().replace('GMT', '+0000')],
    ['Message-ID', `<${digest.slice(0, 32)}@${domain}>`],
    ['MIME-Version', '1.0'],
    ...parts.headers,
    ['Content-Type', `multipart/alternative; boundary="${boundary}"`],
  ];
  const part = (type: string, body: string) =>
    [
      `--${boundary}`,
      `Content-Type: ${type}; charset=UTF-8`,
      'Content-Transfer-Encoding: base64',
      '',
      base64Lines(body),
    ].join('\r\n');
  return [
    ...headers.map(([k, v]) => `${k}: ${v}`),
    '',
    part('text/plain', parts.text),
    part('text/html', parts.html),
    `--${boundary}--`,
    '',
  ].join('\r\n');
}
