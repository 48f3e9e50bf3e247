import type { PolicyStatement } from './policies.js';

/** One request as IAM sees it: an action, the resource ARN, and the request's condition keys. */
export interface AuthorizationRequest {
  /** `service:Action`, e.g. `dynamodb:PutItem`. */
  action: string;
  /** The resource's ARN. */
  resource: string;
  /** Condition keys of the request (`dynamodb:LeadingKeys`: one value; `dynamodb:Attributes`: several); absent keys are absent. */
  context: Readonly<Record<string, readonly string[]>>;
}

/** Whether an IAM `StringLike` pattern (`*` any characters, `?` one) matches `value`. */
export function stringLike(pattern: string, value: string, ignoreCase = false): boolean {
  const source = [...pattern]
    .map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[\\^$.|+()[\]{}]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}$`, ignoreCase ? 'si' : 's').test(value);
}

const OPERATORS: Readonly<Record<string, (pattern: string, value: string) => boolean>> = {
  StringEquals: (p, v) => p === v,
  StringNotEquals: (p, v) => p !== v,
  StringLike: stringLike,
  StringNotLike: (p, v) => !stringLike(p, v),
};

/**
 * Whether one condition operator block holds for the request, as the IAM User Guide's "Condition
 * element" and "Multivalued context keys" pages define it: every key of the block must hold (AND), a
 * key holds when any of its policy values matches (OR). `ForAllValues:` holds when every request value
 * matches some policy value, and also when the key is absent or empty; `ForAnyValue:` when one does;
 * `…IfExists` holds when the key is absent; a plain operator on an absent key fails. An operator this
 * evaluator does not know throws: a policy it cannot evaluate must not pass silently.
 */
function conditionHolds(
  operator: string,
  keys: Record<string, string | string[]>,
  context: AuthorizationRequest['context'],
) {
  const match = /^(?:(ForAllValues|ForAnyValue):)?(\w+?)(IfExists)?$/.exec(operator);
  const test = match && OPERATORS[match[2]!];
  if (!match || !test) throw new Error(`IAM condition operator ${operator} is not supported by local/iam/evaluate.ts`);
  const [, set, , ifExists] = match;
  return Object.entries(keys).every(([key, expected]) => {
    const patterns = Array.isArray(expected) ? expected : [expected];
    const values = Object.entries(context).find(([k]) => k.toLowerCase() === key.toLowerCase())?.[1];
    const matches = (value: string) => patterns.some((p) => test(p, value));
    if (set === 'ForAllValues') return (values ?? []).every(matches);
    if (values === undefined || values.length === 0) return ifExists !== undefined;
    if (set === 'ForAnyValue') return values.some(matches);
    return matches(values[0]!);
  });
}

const statementMatches = (s: PolicyStatement, request: AuthorizationRequest) =>
  s.Action.some((a) => stringLike(a, request.action, true)) &&
  s.Resource.some((r) => stringLike(r, request.resource)) &&
  Object.entries(s.Condition ?? {}).every(([operator, keys]) => conditionHolds(operator, keys, request.context));

/**
 * IAM's decision for an identity policy (the IAM User Guide's "Policy evaluation logic", identity
 * policies alone: no resource policy, boundary or SCP in this stack): an explicit Deny wins, else an
 * Allow whose action, resource and every condition match, else the implicit deny.
 */
export function evaluate(statements: readonly PolicyStatement[], request: AuthorizationRequest): boolean {
  let allowed = false;
  for (const s of statements) {
    if (!statementMatches(s, request)) continue;
    if (s.Effect === 'Deny') return false;
    allowed = true;
  }
  return allowed;
}
