import { InvokeCommand, type LambdaClient } from '@aws-sdk/client-lambda';

/**
 * Asks the operations function to refresh a site's visit table now (`refreshAskedFor`): an asynchronous
 * invocation (`InvocationType: Event`) with `{refresh: <domain>}`. Lambda queues it; while a run holds the
 * function (reserved concurrency 1) the invocation is throttled and Lambda retries it from its queue, for up to
 * the function's maximum event age (lib/functions.ts `asyncInvoke`)
 * (https://docs.aws.amazon.com/lambda/latest/dg/invocation-async.html). `functionName` is `OPERATIONS_FUNCTION`.
 * @throws the SDK's error when Lambda does not accept the invocation (the request answers 503)
 */
export function lambdaRefreshInvoker(client: LambdaClient, functionName: string): (site: string) => Promise<void> {
  return async (site) => {
    await client.send(
      new InvokeCommand({
        FunctionName: functionName,
        InvocationType: 'Event',
        Payload: new TextEncoder().encode(JSON.stringify({ refresh: site })),
      }),
    );
  };
}
