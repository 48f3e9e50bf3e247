import { rm } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { CapacityMeter, attachCapacityMeter, difference, totalOf } from '../lambdas/adapters/dynamo/capacity-meter.js';
import { dynamoPaymentDeps } from '../lambdas/wiring/payment-deps.js';
import { itemBytes } from '../lambdas/adapters/dynamo/rollup-reader.js';
import { PK } from '../lambdas/adapters/dynamo/table.js';
import { parsePaymentLine } from '../lambdas/domain/payments/import-line.js';
import type { SiteConfig } from '../lambdas/domain/site.js';
import { importPayments } from '../lambdas/services/payment-import.js';
import { importEventLines } from '../local/import-events.js';
import { localPaths } from '../local/service.js';
import { paymentMix } from './payment-mix.js';
import { SITE, startBenchService } from './rebuild.js';
import type { Figure } from './report.js';
import { benchDynaliteThread, busiestOtherThread, threadCpu } from './app-cpu.js';

const DAY = 86_400_000;

/**
 * Write units by kind of partition (the key's prefix before its first `#`:
 * PAY, PAYID, PL, CP, CH, V …), counted from the items each write request
 * carries (1 WRU per started KB of the item; a delete or an update 1): the
 * per-partition load that DynamoDB's limit of 1,000 WCU a second per
 * partition applies to.
 */
function partitionWrites(conn: { doc: { middlewareStack: { add: (...args: never[]) => void } } }) {
  const byKind = new Map<string, number>();
  // The document client's commands at this step carry plain items (marshalled ones a step later): counted as they are.
  type Marshalled = Record<string, unknown>;
  const add = (key: Marshalled, units: number) => {
    const kind = String(key[PK] ?? '').split('#')[0] ?? '';
    byKind.set(kind, (byKind.get(kind) ?? 0) + units);
  };
  const wru = (item: Marshalled) => Math.max(1, Math.ceil(itemBytes(item) / 1024));
  (conn.doc.middlewareStack.add as (mw: unknown, opts: unknown) => void)(
    (next: (args: { input: Record<string, unknown> }) => Promise<unknown>, context: { commandName?: string }) =>
      async (args: { input: Record<string, unknown> }) => {
        const input = args.input as {
          Item?: Marshalled;
          Key?: Marshalled;
          RequestItems?: Record<
            string,
            Array<{ PutRequest?: { Item: Marshalled }; DeleteRequest?: { Key: Marshalled } }>
          >;
        };
        const command = context.commandName ?? '';
        if (command === 'PutItemCommand' && input.Item) add(input.Item, wru(input.Item));
        else if ((command === 'UpdateItemCommand' || command === 'DeleteItemCommand') && input.Key) add(input.Key, 1);
        else if (command === 'BatchWriteItemCommand')
          for (const requests of Object.values(input.RequestItems ?? {}))
            for (const r of requests) {
              if (r.PutRequest) add(r.PutRequest.Item, wru(r.PutRequest.Item));
              else if (r.DeleteRequest) add(r.DeleteRequest.Key, 1);
            }
        return next(args);
      },
    { step: 'initialize', name: 'benchPartitionWrites' },
  );
  return byKind;
}

/** A phase of the import as its `onProgress` reports it: wall time, requests, and requests by operation. */
interface PhaseSpan {
  phase: string;
  ms: number;
  requests: number;
  /** Requests by operation, and the CPU ms of the main thread (`cpuMain`) and of dynalite's (`cpuDynalite`). */
  detail: Record<string, number>;
}

/**
 * Times each phase the import reports (a phase ends as the next begins; `enter('end')` closes the last),
 * with its CPU by thread: on a loaded machine a phase's CPU varies less than its wall time.
 */
function phaseMeter(meter: CapacityMeter): { enter: (phase: string) => void; spans: PhaseSpan[] } {
  const spans: PhaseSpan[] = [];
  type Mark = {
    phase: string;
    at: number;
    ops: ReturnType<CapacityMeter['snapshot']>;
    cpu: ReturnType<typeof threadCpu>;
  };
  let open: Mark | null = null;
  return {
    spans,
    enter: (phase) => {
      if (open?.phase === phase) return;
      const ops = meter.snapshot();
      const cpu = threadCpu();
      if (open) {
        const diff = difference(ops, open.ops);
        spans.push({
          phase: open.phase,
          ms: performance.now() - open.at,
          requests: totalOf(diff).requests,
          detail: {
            ...Object.fromEntries(Object.entries(diff).map(([op, c]) => [op, c.requests])),
            ...(open.cpu && cpu
              ? { cpuMain: cpu.main - open.cpu.main, cpuDynalite: busiestOtherThread(open.cpu, cpu) }
              : {}),
          },
        });
      }
      open = { phase, at: performance.now(), ops, cpu };
    },
  };
}

/** One point of the import benchmark: a fresh local stack, the mix's visits sessionized, then the payments imported. */
async function importPoint(payments: number): Promise<Figure[]> {
  const thread = benchDynaliteThread();
  const { dataDir, service, config } = await startBenchService('ff-bench-import-', { dynaliteThread: thread });
  try {
    const mix = paymentMix(payments, Date.now() - DAY);
    await importEventLines(service.dynamo, localPaths(dataDir).stream, mix.events, { site: SITE });
    await service.sessionize();
    const site = (await config.getSite(SITE)) as SiteConfig;

    // From here on the service is idle (no timers): what the client counts is the import's.
    const meter = new CapacityMeter();
    attachCapacityMeter(service.dynamo.doc.middlewareStack, meter);
    const byKind = partitionWrites(service.dynamo as never);
    const started = performance.now();
    const cpu = process.cpuUsage();
    const threadsBefore = threadCpu();
    // What `footfall import payments` does: parse every line, then the bulk import.
    const facts = mix.lines.map((line, i) => parsePaymentLine(line, i + 1));
    const phases = phaseMeter(meter);
    const outcome = await importPayments(dynamoPaymentDeps(service.dynamo), site, facts, {
      onProgress: (p) => phases.enter(p.phase),
    });
    const ms = performance.now() - started;
    phases.enter('end');
    const used = process.cpuUsage(cpu);
    const threadsAfter = threadCpu();
    const cpuMs = (used.user + used.system) / 1000;
    const load = loadavg()[0] ?? 0;
    const total = meter.total();
    const per = (x: number) => x / outcome.payments;
    const label = `${payments.toLocaleString('en-US')} payments (dynalite ${thread ? 'in its own thread' : 'inline'})`;
    const hottest = Math.max(...['PAY', 'PAYID', 'PL', 'CP', 'CH'].map((k) => byKind.get(k) ?? 0));
    return [
      {
        section: 'import',
        name: `${label}: imported per second`,
        value: (outcome.payments * 1000) / ms,
        unit: 'payments/s',
        target: '≥ 1,000',
      },
      { section: 'import', name: `${label}: wall time (${mix.lines.length} lines)`, value: ms, unit: 'ms' },
      {
        // The process's CPU time (the import and the in-process dynalite, on two threads): the work a payment
        // costs whatever else the machine runs. The goal is the wall rate above; this is one core's worth.
        section: 'import',
        name: `${label}: imported per CPU-second (load average ${load.toFixed(1)} during the run)`,
        value: (outcome.payments * 1000) / cpuMs,
        unit: 'payments/s',
      },
      {
        // The main thread (parsing, crediting, the SDK client) and the others (dynalite's thread, GC helpers).
        section: 'import',
        name: `${label}: CPU-seconds, main thread / other threads`,
        value: cpuMs / 1000,
        unit: 's',
        detail:
          threadsBefore && threadsAfter
            ? {
                main: (threadsAfter.main - threadsBefore.main) / 1000,
                others: (threadsAfter.others - threadsBefore.others) / 1000,
                // With dynalite in its own thread: that thread alone (the rest of `others` is libuv's pool and V8's helpers).
                busiestOther: busiestOtherThread(threadsBefore, threadsAfter) / 1000,
              }
            : undefined,
      },
      { section: 'import', name: `${label}: requests per payment`, value: per(total.requests), unit: 'requests' },
      {
        section: 'import',
        name: `${label}: WRU per payment`,
        value: per(total.wcu),
        unit: 'WRU',
        detail: Object.fromEntries([...byKind].map(([k, v]) => [k, per(v)])),
      },
      { section: 'import', name: `${label}: RRU per payment`, value: per(total.rcu), unit: 'RRU' },
      {
        section: 'import',
        name: `${label}: WRU per payment on the hottest per-site partition kind`,
        value: per(hottest),
        unit: 'WRU',
      },
      {
        section: 'import',
        name: `${label}: payments/s one partition's 1,000 WCU/s allow`,
        value: 1000 / per(hottest),
        unit: 'payments/s',
      },
      ...phases.spans.map(({ phase, ms: phaseMs, requests, detail }) => ({
        section: 'import',
        name: `${label}: phase "${phase}" (${requests.toLocaleString('en-US')} requests)`,
        value: phaseMs,
        unit: 'ms',
        detail,
      })),
    ];
  } finally {
    await service.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/**
 * `npm run bench -- --only import`: `footfall import payments` on a local
 * stack at 10,000 and 100,000 payments of the stated mix (`paymentMix`):
 * payments imported per second (parse and import, on dynalite), requests,
 * WRU and RRU per payment counted at the SDK client, and the WRU per payment
 * each kind of per-site partition takes (PAY, PAYID, PL, CP, CH), from which
 * the rate DynamoDB's per-partition limit allows follows.
 * `FOOTFALL_BENCH_IMPORT_POINTS` (comma-separated) changes the points;
 * dynalite runs in a thread of its own unless `FOOTFALL_BENCH_DYNALITE=inline`,
 * and the CPU is split between the main thread and the others (`threadCpu`).
 */
export async function benchImport(): Promise<Figure[]> {
  const points = (process.env.FOOTFALL_BENCH_IMPORT_POINTS ?? '10000,100000').split(',').map(Number);
  const figures: Figure[] = [];
  for (const n of points) figures.push(...(await importPoint(n)));
  return figures;
}
