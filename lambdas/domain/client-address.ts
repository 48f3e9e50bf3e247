import { isIP } from 'node:net';

/**
 * The header CloudFront adds when an origin request policy forwards it: the
 * viewer's address and source port, `198.51.100.10:46532`, IPv6 unbracketed
 * (`2001:db8::1:46532`). Behind CloudFront the connection the function sees
 * (`sourceIp`) is CloudFront's, so this is the visitor's address there.
 * https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/adding-cloudfront-headers.html
 */
export const VIEWER_ADDRESS_HEADER = 'cloudfront-viewer-address';

/**
 * The origin custom header CloudFront adds to the app's requests to the HTTP API
 * (`lib/app-distribution.ts`), holding a value made at deploy: a request that carries it came
 * through the distribution, so its `cloudfront-viewer-address` was set by CloudFront, not by the
 * client (the API's execute-api URL is public too). CloudFront overwrites a viewer's header of
 * the same name (CloudFront developer guide, "Add custom headers to origin requests").
 */
export const ORIGIN_SECRET_HEADER = 'x-footfall-origin-secret';

/** The address part of an `address:port` value (brackets around IPv6 allowed), or null when it holds no IP address. */
function addressOf(value: string): string | null {
  const at = value.lastIndexOf(':');
  if (at <= 0 || !/^\d{1,5}$/.test(value.slice(at + 1))) return null;
  const address = value.slice(0, at).replace(/^\[(.*)\]$/, '$1');
  return isIP(address) === 0 ? null : address;
}

/**
 * The visitor's IP address for the country lookup and the daily visitor hash:
 * CloudFront's `cloudfront-viewer-address` when it holds one, else the address
 * of the connection (`requestContext.http.sourceIp`, which API Gateway and the
 * local server fill in). A client that calls the API directly can send the
 * header with any value, which moves only its own country and visitor hash,
 * as sending `v` or a country header already can. `headers` has lower-case names.
 */
export function clientAddress(headers: Readonly<Record<string, string | undefined>>, sourceIp: string): string {
  const viewer = headers[VIEWER_ADDRESS_HEADER]?.trim();
  return (viewer && addressOf(viewer)) || sourceIp;
}
