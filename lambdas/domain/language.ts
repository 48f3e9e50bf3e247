/**
 * Longest language tag we store (`language` in `tracked-event.ts`); RFC 5646
 * §4.4.1 asks implementations to keep at least 35 characters.
 */
export const MAX_LANGUAGE_LENGTH = 35;

/**
 * A language range of RFC 4647 §2.1 (`1*8ALPHA *("-" 1*8alphanum)`), with the
 * first subtag 2–8 letters: a language, not a singleton such as `x-` or `i-`.
 */
const LANGUAGE_RANGE = /^[a-z]{2,8}(?:-[a-z0-9]{1,8})*$/i;

/** `qvalue` of RFC 9110 §12.4.2: `0` to `1` with at most three decimals. */
const QVALUE = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/;

/**
 * Case of a subtag by its shape (RFC 5646 §2.1.1): the first is the language
 * (lower), then 4 letters a script (title), 2 letters or 3 digits a region
 * (upper), anything else lower. After a singleton (`-u-`, `-x-`) all lower.
 */
function caseSubtags(tag: string): string {
  let afterSingleton = false;
  return tag
    .split('-')
    .map((sub, i) => {
      const lower = sub.toLowerCase();
      if (sub.length === 1) afterSingleton = true;
      if (i === 0 || afterSingleton) return lower;
      if (/^[a-z]{4}$/.test(lower)) return lower.charAt(0).toUpperCase() + lower.slice(1);
      if (/^(?:[a-z]{2}|\d{3})$/.test(lower)) return lower.toUpperCase();
      return lower;
    })
    .join('-');
}

/**
 * Shortens a tag to `MAX_LANGUAGE_LENGTH` the way RFC 5646 §4.4.2 says: drop
 * whole subtags from the end, then a singleton left dangling at the end.
 */
function truncateTag(tag: string): string {
  const subtags = tag.split('-');
  while (subtags.join('-').length > MAX_LANGUAGE_LENGTH || subtags.at(-1)?.length === 1) subtags.pop();
  return subtags.join('-');
}

/** One `language-range [ weight ]` element, or null when it is malformed. */
function parseElement(element: string): { range: string; q: number } | null {
  const [rawRange = '', ...params] = element.split(';');
  const range = rawRange.trim();
  let q = 1;
  for (const param of params) {
    const [name = '', value = ''] = param.split('=').map((part) => part.trim());
    // Parameter names are case-insensitive (RFC 9110 §5.6.6); Accept-Language defines only q.
    if (name.toLowerCase() !== 'q') continue;
    if (!QVALUE.test(value)) return null;
    q = Number(value);
  }
  return { range, q };
}

/**
 * The visitor's preferred language from an `Accept-Language` header (RFC 9110
 * §12.5.4): the language range with the highest `q` (default 1), the first one
 * on a tie. Ranges with `q=0` ("not acceptable", §12.4.2), the wildcard `*`
 * (it names no language) and malformed elements are skipped. Returned in
 * RFC 5646 case (`en`, `pt-BR`, `zh-Hant-TW`), at most 35 characters; null when
 * nothing usable is left.
 */
export function languageFromAcceptLanguage(header: string | undefined): string | null {
  if (!header) return null;
  let best: { range: string; q: number } | null = null;
  for (const element of header.split(',')) {
    const parsed = parseElement(element);
    if (!parsed || parsed.q === 0 || !LANGUAGE_RANGE.test(parsed.range)) continue;
    if (!best || parsed.q > best.q) best = parsed;
  }
  return best ? truncateTag(caseSubtags(best.range)) : null;
}
