import { InvokeCommand, type LambdaClient } from '@aws-sdk/client-lambda';
import { UNAVAILABLE_MESSAGE, UnavailableError } from '../domain/errors.js';
import type { FilteredVisits } from '../ports.js';
import { filteredVisitsByInvoke, type FilteredCall } from './filtered-wire.js';

/**
 * The report and MCP functions' filtered engine (`FilteredVisits`): each method is a synchronous
 * invocation (`RequestResponse`) of the filtered function `functionName` (`FILTERED_FUNCTION`) with
 * `{method, args}` (`filteredVisitsByInvoke`), so only filtered requests run on that function's memory
 * and architecture. Lambda's own limits apply: 6 MB of response, the function's timeout.
 * @throws (from each method) UnavailableError (503) when Lambda refuses the invocation (throttled, not
 *   found, denied), or the function fails, times out or returns more than 6 MB (a function error)
 */
export function lambdaFilteredVisits(client: LambdaClient, functionName: string): FilteredVisits {
  return filteredVisitsByInvoke(async (call: FilteredCall) => {
    let out;
    try {
      out = await client.send(
        new InvokeCommand({
          FunctionName: functionName,
          InvocationType: 'RequestResponse',
          Payload: new TextEncoder().encode(JSON.stringify(call)),
        }),
      );
    } catch (error) {
      throw new UnavailableError(UNAVAILABLE_MESSAGE, error);
    }
    const text = out.Payload ? new TextDecoder().decode(out.Payload) : 'null';
    // A function error's payload is `{errorType, errorMessage}` (Sandbox.Timedout for a timeout).
    if (out.FunctionError)
      throw new UnavailableError(UNAVAILABLE_MESSAGE, new Error(`${call.method}: ${out.FunctionError} ${text}`));
    return JSON.parse(text) as unknown;
  });
}
