import { InvokeCommand, type LambdaClient } from '@aws-sdk/client-lambda';
import type { Provider } from '../domain/payments/facts.js';

/**
 * Starts the imports function for a job (`lambdas/handlers/imports.ts`): an asynchronous invocation
 * (`InvocationType: Event`), which Lambda queues and retries twice on a failure
 * (https://docs.aws.amazon.com/lambda/latest/dg/invocation-async.html); the caller does not wait for
 * the run. `functionName` is the function's name or ARN (`IMPORTS_FUNCTION`).
 * @throws the SDK's error when Lambda does not accept the invocation (the caller answers 503)
 */
export function lambdaImportInvoker(
  client: LambdaClient,
  functionName: string,
): (site: string, provider: Provider, run: string) => Promise<void> {
  return async (site, provider, run) => {
    await client.send(
      new InvokeCommand({
        FunctionName: functionName,
        InvocationType: 'Event',
        Payload: new TextEncoder().encode(JSON.stringify({ site, provider, run })),
      }),
    );
  };
}
