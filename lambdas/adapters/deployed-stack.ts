import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { STACK_INGEST_OUTPUTS, STACK_VERSION_OUTPUTS, ingestionOf, type Deployed } from '../domain/upgrade.js';

/**
 * The release, layout and ingestion (stream, draining, delivery) a deployed stack runs, from its outputs
 * (DescribeStacks; the caller needs `cloudformation:DescribeStacks` on it).
 * An output absent (a stack deployed before it existed) is null.
 * @throws Error when the stack does not exist or has no outputs to read (CloudFormation's message)
 */
export async function readDeployedStack(cfn: CloudFormationClient, stackName: string): Promise<Deployed> {
  const { Stacks = [] } = await cfn.send(new DescribeStacksCommand({ StackName: stackName }));
  const stack = Stacks[0];
  if (!stack) throw new Error(`stack ${stackName} does not exist`);
  const outputs = new Map((stack.Outputs ?? []).map((o) => [o.OutputKey, o.OutputValue]));
  const layout = outputs.get(STACK_VERSION_OUTPUTS.layout);
  const ingestion = ingestionOf(outputs.has(STACK_INGEST_OUTPUTS.stream), outputs.has(STACK_INGEST_OUTPUTS.delivery));
  return {
    version: outputs.get(STACK_VERSION_OUTPUTS.version) ?? null,
    layout: layout === undefined ? null : Number(layout),
    ...(ingestion ? { ingestion } : {}),
  };
}
