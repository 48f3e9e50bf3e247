import { createRequire } from 'node:module';
import type { Server } from 'node:net';
import { CreateStreamCommand, DescribeStreamCommand, type KinesisClient } from '@aws-sdk/client-kinesis';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { createKinesisClient } from '../../lambdas/adapters/kinesis-stream.js';

const require = createRequire(import.meta.url);

/** A kinesalite server on an ephemeral port with one active stream of one shard, and a client of it. */
export interface Kinesalite {
  client: KinesisClient;
  /** Destroys the client and closes the server. */
  close(): Promise<void>;
}

/** Starts kinesalite (the Kinesis protocol in-process), creates `streamName` with one shard and waits until it is ACTIVE. */
export async function startKinesalite(streamName: string): Promise<Kinesalite> {
  const kinesalite = require('kinesalite') as (o: Record<string, unknown>) => Server;
  const server = kinesalite({ createStreamMs: 0, deleteStreamMs: 0, shardLimit: 10 });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as { port: number };
  const client = createKinesisClient({ endpoint: `http://127.0.0.1:${port}`, requestHandler: new NodeHttpHandler() });
  await client.send(new CreateStreamCommand({ StreamName: streamName, ShardCount: 1 }));
  for (;;) {
    const d = await client.send(new DescribeStreamCommand({ StreamName: streamName }));
    if (d.StreamDescription?.StreamStatus === 'ACTIVE') break;
    await new Promise((r) => setTimeout(r, 20));
  }
  return {
    client,
    close: async () => {
      client.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
