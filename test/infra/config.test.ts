import { testApp } from './synth.js';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CONFIG_DEFAULTS, parseConfig, readConfig } from '../../lib/config.js';
import { FUNCTIONS, deployedFunctions, type FunctionSpec } from '../../lib/functions.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

describe('stack configuration from CDK context', () => {
  it('defaults when nothing is set: ingestion only, one provisioned shard, data protected', () => {
    expect(parseConfig({})).toEqual({
      app: false,
      shards: 1,
      drainStream: false,
      rawRetentionDays: 730,
      deletionProtection: true,
      throttleRate: 1000,
      throttleBurst: 2000,
      logRetentionDays: 30,
      iteratorAgeAlarmSeconds: 300,
      hotPathTracing: false,
      pointInTimeRecovery: true,
      tableClass: 'standard-ia',
      stackName: 'Footfall',
      legacySecretsKey: false,
      mcpOrigins: [],
      filteredReports: true,
    });
    expect(parseConfig({})).toEqual({ ...CONFIG_DEFAULTS });
  });

  it('takes the strings of `-c key=value` and the JSON values of cdk.json alike', () => {
    const fromCli = parseConfig({
      app: 'true',
      shards: '4',
      rawRetentionDays: '0',
      deletionProtection: 'false',
      throttleRate: '50',
      throttleBurst: '100',
      logRetentionDays: '365',
      iteratorAgeAlarmSeconds: '60',
    });
    const fromJson = parseConfig({
      app: true,
      shards: 4,
      rawRetentionDays: 0,
      deletionProtection: false,
      throttleRate: 50,
      throttleBurst: 100,
      logRetentionDays: 365,
      iteratorAgeAlarmSeconds: 60,
    });
    expect(fromCli).toEqual(fromJson);
    expect(fromCli).toMatchObject({
      app: true,
      shards: 4,
      rawRetentionDays: 0,
      deletionProtection: false,
      logRetentionDays: 365,
    });
    expect(parseConfig({ hotPathConcurrency: '100' }).hotPathConcurrency).toBe(100);
    expect(parseConfig({ hotPathConcurrency: 100 }).hotPathConcurrency).toBe(100);
  });

  it.each([
    [{ app: 'yes' }, 'app'],
    [{ shards: '0' }, 'shards'],
    [{ hotPathConcurrency: '0' }, 'hotPathConcurrency'],
    [{ hotPathConcurrency: 'lots' }, 'hotPathConcurrency'],
    [{ shards: '2.5' }, 'shards'],
    [{ shards: 'many' }, 'shards'],
    [{ rawRetentionDays: -1 }, 'rawRetentionDays'],
    [{ deletionProtection: 'off' }, 'deletionProtection'],
    [{ throttleBurst: 0 }, 'throttleBurst'],
    [{ logRetentionDays: 31 }, 'logRetentionDays'],
    [{ geoDatabase: 'GeoLite2-Country.tar.gz' }, 'geoDatabase'],
    [{ hotPathTracing: 'sampled' }, 'hotPathTracing'],
    [{ pointInTimeRecovery: 'no' }, 'pointInTimeRecovery'],
    [{ tableClass: 'infrequent' }, 'tableClass'],
    [{ stackName: 'Footfall Staging' }, 'stackName'],
    [{ alarmEmail: 'ops' }, 'alarmEmail'],
    [{ alarmTopicArn: 'ops-topic' }, 'alarmTopicArn'],
    [{ app: true, reportSender: 'reports' }, 'reportSender'],
    [{ reportSender: 'reports@example.com' }, 'reportSender: needs app mode'],
  ])('rejects %j, naming the key', (raw, key) => {
    expect(() => parseConfig(raw)).toThrow(new RegExp(`invalid CDK context: .*${key}`));
  });

  it('takes a report sender in app mode, lowercased; none by default (email reports off)', () => {
    expect(parseConfig({}).reportSender).toBeUndefined();
    expect(parseConfig({ app: 'true', reportSender: 'Reports@Example.com' }).reportSender).toBe('reports@example.com');
  });

  it('takes on-demand capacity instead of shards', () => {
    expect(parseConfig({ shards: 'on-demand' })).toMatchObject({ shards: 'on-demand' });
  });

  it('reads the context of an app', () => {
    const app = testApp({
      context: {
        app: 'true',
        shards: '2',
        deletionProtection: false,
        hotPathTracing: 'true',
        pointInTimeRecovery: 'false',
        tableClass: 'standard',
      },
    });
    expect(readConfig(app)).toMatchObject({
      app: true,
      shards: 2,
      deletionProtection: false,
      rawRetentionDays: 730,
      hotPathTracing: true,
      pointInTimeRecovery: false,
      tableClass: 'standard',
    });
  });
});

describe('function registry', () => {
  it('names existing entry files, each with a handler export', () => {
    for (const [name, spec] of Object.entries(FUNCTIONS)) {
      expect(name).toMatch(/^[a-z][A-Za-z0-9]*$/);
      expect(existsSync(`${root}${spec.entry}`), spec.entry).toBe(true);
    }
  });

  it('keeps app-only functions out unless app mode is on', () => {
    const registry: Record<string, FunctionSpec> = {
      ingest: { entry: 'lambdas/entry/health.ts', description: 'always' },
      report: { entry: 'lambdas/entry/health.ts', description: 'app only', appOnly: true },
    };
    expect(deployedFunctions(registry, { app: false }).map(([name]) => name)).toEqual(['ingest']);
    expect(deployedFunctions(registry, { app: true }).map(([name]) => name)).toEqual(['ingest', 'report']);
  });
});
