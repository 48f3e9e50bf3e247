import { readFileSync } from 'node:fs';

/** One statement of a synthesized identity policy, with the stack's resources named by `${kind}` placeholders. */
export interface PolicyStatement {
  Effect: 'Allow' | 'Deny';
  Action: string[];
  Resource: string[];
  Condition?: Record<string, Record<string, string | string[]>>;
}

/** Each function's identity policy statements, as `cdk synth -c app=true` produces them (`local/iam/policies.json`). */
export type FunctionPolicies = Record<string, PolicyStatement[]>;

/**
 * Roles of the stack that are not a function's but whose work a stand-in of the twin does, by the
 * name the twin asks them by and the prefix of their logical id: the archive's Direct PUT delivery
 * writes the archive (S3, the Glue table's schema) with its destination role, which the local
 * archive writer plays (`local/consumers.ts`). A role the stack does not have is left out.
 */
export const STACK_ROLES = {
  archiveDestination: 'ArchiveDirectDeliveryS3DestinationRole',
} as const;

type Json = unknown;
interface Template {
  Resources: Record<string, { Type: string; Properties?: Record<string, Json> }>;
}

/**
 * The placeholder of a template resource: its type and logical id without CDK's hash suffix
 * (`DynamoDB::Table/Table`, `KMS::Key/SecretsKey`), stable across synths of the same stack.
 */
function placeholder(template: Template, id: string): string {
  const type = template.Resources[id]?.Type;
  if (!type) throw new Error(`a policy refers to ${id}, which is not a resource of the template`);
  return `${type.replace(/^AWS::/, '')}/${id.replace(/[0-9A-F]{8}$/, '')}`;
}

/**
 * A CloudFormation value as a string with placeholders: `Fn::GetAtt` of a resource's `Arn` becomes
 * `${<placeholder>}`, another attribute `${<placeholder>.<attribute>}`, a `Ref` `${<placeholder>.Ref}`,
 * pseudo parameters stay `${AWS::Region}`, `Fn::Join` joins. Throws on anything else, so a new
 * construct in a policy is seen at generation rather than evaluated wrongly.
 */
function flatten(value: Json, template: Template): string {
  if (typeof value === 'string') return value;
  const v = value as Record<string, Json>;
  if ('Ref' in v) {
    const ref = String(v.Ref);
    return ref.startsWith('AWS::') ? `\${${ref}}` : `\${${placeholder(template, ref)}.Ref}`;
  }
  if ('Fn::GetAtt' in v) {
    const [id, attribute] = v['Fn::GetAtt'] as [string, string];
    return `\${${placeholder(template, id)}${attribute === 'Arn' ? '' : `.${attribute}`}}`;
  }
  if ('Fn::Join' in v) {
    const [separator, parts] = v['Fn::Join'] as [string, Json[]];
    return parts.map((p) => flatten(p, template)).join(separator);
  }
  throw new Error(`unsupported value in a policy: ${JSON.stringify(value)}`);
}

const list = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);

/**
 * Each function's identity policy statements from a synthesized template (`Template.toJSON()`): the
 * `AWS::IAM::Policy` resources attached to the role `<function>Role…`, in template order, values
 * flattened to placeholders; then those of the `STACK_ROLES` the template has. `functions` are the
 * registry's names (`lib/functions.ts`).
 */
export function functionPolicies(template: Template, functions: readonly string[]): FunctionPolicies {
  const out: FunctionPolicies = {};
  const roleOf = (prefix: string) =>
    Object.keys(template.Resources).find(
      (id) => template.Resources[id]!.Type === 'AWS::IAM::Role' && id.startsWith(prefix),
    );
  const principals: Array<[string, string | undefined]> = [
    ...functions.map((name): [string, string | undefined] => [name, roleOf(`${name}Role`)]),
    ...Object.entries(STACK_ROLES)
      .map(([name, prefix]): [string, string | undefined] => [name, roleOf(prefix)])
      .filter(([, role]) => role !== undefined),
  ];
  for (const [name, role] of principals) {
    const statements = Object.values(template.Resources)
      .filter((r) => r.Type === 'AWS::IAM::Policy')
      .filter((r) => list(r.Properties!.Roles as Json[]).some((ref) => (ref as { Ref?: string }).Ref === role))
      .flatMap((r) => (r.Properties!.PolicyDocument as { Statement: Array<Record<string, Json>> }).Statement);
    out[name] = statements.map((s) => ({
      Effect: s.Effect as 'Allow' | 'Deny',
      Action: list(s.Action as string | string[]),
      Resource: list(s.Resource as Json).map((r) => flatten(r, template)),
      ...(s.Condition ? { Condition: s.Condition as PolicyStatement['Condition'] } : {}),
    }));
  }
  return out;
}

/** The checked-in policies (`npm run iam:policies` writes them; test/infra/iam-policies.test.ts holds them to a fresh synth). */
export const POLICIES_FILE = new URL('./policies.json', import.meta.url);

/** The checked-in policies, read once. */
export const loadPolicies = (): FunctionPolicies => JSON.parse(readFileSync(POLICIES_FILE, 'utf8')) as FunctionPolicies;
