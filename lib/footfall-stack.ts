import { Aws, CfnOutput, Duration, Fn, RemovalPolicy, Stack, Validations, type StackProps } from 'aws-cdk-lib';
import type * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as cloudwatchActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as kinesis from 'aws-cdk-lib/aws-kinesis';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as logs from 'aws-cdk-lib/aws-logs';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import type { Construct } from 'constructs';
import { PK, SK, TTL_ATTRIBUTE } from '../lambdas/adapters/dynamo/table.js';
import { secretsParameterNames } from '../lambdas/adapters/secrets/parameter-name.js';
import { AppDistribution } from './app-distribution.js';
import { addBudget } from './budget.js';
import { certificateStackName } from './certificate-stack.js';
import { EventArchive } from './archive.js';
import { IngestDelivery } from './ingest.js';
import type { FootfallConfig } from './config.js';
import {
  FILTERED_MEMORY_MIB,
  FILTERED_TIMEOUT_SECONDS,
  FUNCTIONS,
  deployedFunctions,
  type FunctionSpec,
} from './functions.js';
import { DUCKDB_ARCHITECTURE, VISIT_TABLE_EPHEMERAL, duckdbLayer, grantVisitTable } from './visit-table.js';
import { FootfallHttpApi } from './http-api.js';
import { secureBucket } from './secure-bucket.js';
import { RELEASE_VERSION } from './release.js';
import { sendReports } from './report-mail.js';
import { DATA_LAYOUT } from '../lambdas/domain/site.js';
import { STACK_INGEST_OUTPUTS, STACK_VERSION_OUTPUTS } from '../lambdas/domain/upgrade.js';
import { ARCHITECTURE, FootfallFunction, RUNTIME } from './lambda-defaults.js';
import { CountryDatabase } from '../lambdas/adapters/country-database.js';
import { PACKAGED_COUNTRY_DATABASE } from '../local/geo.js';
import { basename, dirname, resolve } from 'node:path';

export interface FootfallStackProps extends StackProps {
  config: FootfallConfig;
  /** The function registry; tests pass their own. @default FUNCTIONS */
  functions?: Readonly<Record<string, FunctionSpec>>;
}

/**
 * The 5xx alarms (the HTTP API's, and each hot-path function URL's): five-minute periods with at least one
 * 5xx, out of the last `periods`, that raise it. One failed request is one period and does not page; a failure
 * that lasts 10 of 15 minutes does, at any traffic (`docs/deploy.md`, "Alarms").
 */
export const API_5XX_ALARM = { datapoints: 2, periods: 3 } as const;
/** Age of the newest archived data (Firehose `DeliveryToS3.DataFreshness`) that raises the alarm: 30 minutes. */
export const ARCHIVE_FRESHNESS_ALARM_SECONDS = 1800;
/**
 * The same for the ingest delivery: 5 minutes, five times its 60 s buffer (`INGEST_BUFFER_INTERVAL`),
 * so a healthy delivery (an object a minute, at times a minute late) never raises it and a stalled
 * one does within 15 minutes (two 5-minute periods above it).
 */
export const INGEST_FRESHNESS_ALARM_SECONDS = 300;
/** Consecutive failed runs of a scheduled function (one each `everyMinutes`) that raise its alarm: one failure is retried by the next run. */
export const SCHEDULED_FAILED_RUNS_ALARM = 3;

/**
 * The whole Footfall service in one environment-agnostic stack
 * (`docs/architecture.md`, with the hot path on its own function URLs instead
 * of the HTTP API): event function URL → event Lambda →
 * Kinesis → sessionize Lambda → DynamoDB, and Kinesis → Firehose → Parquet on
 * S3 → Glue → Athena; the HTTP API serves the report API, webhooks, the app
 * and the hot path's old routes. Functions come from the registry in
 * `lib/functions.ts`.
 */
export class FootfallStack extends Stack {
  readonly config: FootfallConfig;
  readonly table: dynamodb.Table;
  /** The event stream of a stack upgraded from it, kept while it drains (`-c drainStream=true`). */
  readonly stream: kinesis.Stream | undefined;
  readonly archive: EventArchive;
  /** The ingest delivery the sessionizer reads (`docs/ingestion.md`, "Choosing the ingestion path"). */
  readonly ingest: IngestDelivery;
  readonly http: FootfallHttpApi;
  /** Envelope key of the webhook signing secrets (`docs/security.md`). */
  /** The KMS key of secrets sealed by earlier releases, with `-c legacySecretsKey=true` only. */
  readonly secretsKey: kms.Key | undefined;
  readonly functions: Record<string, FootfallFunction> = {};
  private countryLayer?: { layer: lambda.LayerVersion; path: string };
  private duckdb?: lambda.LayerVersion;
  /** App mode only: the dashboard's CloudFront distribution and bucket. */
  readonly app: AppDistribution | undefined;
  private readonly functionUrls: Record<string, lambda.FunctionUrl> = {};
  private readonly registry: Readonly<Record<string, FunctionSpec>>;

  constructor(scope: Construct, id: string, props: FootfallStackProps) {
    super(scope, id, props);
    const { config } = props;
    this.config = config;
    const logRetention = config.logRetentionDays as logs.RetentionDays;
    // Glue database and Athena workgroup: unique per account and region, so named after the stack.
    const name = this.stackName.toLowerCase().replace(/[^a-z0-9_]/g, '_');

    this.table = new dynamodb.Table(this, 'Table', {
      partitionKey: { name: PK, type: dynamodb.AttributeType.STRING },
      sortKey: { name: SK, type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: config.pointInTimeRecovery },
      tableClass:
        config.tableClass === 'standard'
          ? dynamodb.TableClass.STANDARD
          : dynamodb.TableClass.STANDARD_INFREQUENT_ACCESS,
      timeToLiveAttribute: TTL_ATTRIBUTE,
      deletionProtection: config.deletionProtection,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    if (!config.pointInTimeRecovery) {
      Validations.of(this.table).acknowledge({
        id: 'AwsSolutions-DDB3',
        reason:
          'Point-in-time recovery turned off by the owner (-c pointInTimeRecovery=false): docs/deploy.md "Point-in-time recovery" says what only it protects (payments, customers, configuration) and that AWS Backup on their own schedule can stand in.',
      });
    }

    // Only while a stack upgraded from the stream drains it (docs/deploy.md "Upgrading from the event stream"):
    // same logical id and settings as before, so the deploy keeps it; deleted with the stack.
    this.stream = config.drainStream
      ? new kinesis.Stream(this, 'Events', {
          removalPolicy: RemovalPolicy.DESTROY,
          ...(config.shards === 'on-demand'
            ? { streamMode: kinesis.StreamMode.ON_DEMAND }
            : { streamMode: kinesis.StreamMode.PROVISIONED, shardCount: config.shards }),
          encryption: kinesis.StreamEncryption.MANAGED,
          retentionPeriod: Duration.hours(24),
        })
      : undefined;

    const accessLogs = secureBucket(this, 'AccessLogs', {
      lifecycleRules: [{ id: 'expire-access-logs', expiration: Duration.days(90) }],
    });
    Validations.of(accessLogs).acknowledge({
      id: 'AwsSolutions-S1',
      reason:
        'This is the server access log bucket of the other buckets; logging its own access would log every log delivery, in a loop.',
    });

    this.archive = new EventArchive(this, 'Archive', {
      drainStream: this.stream,
      rawRetentionDays: config.rawRetentionDays,
      accessLogs,
      name,
      logRetention,
    });

    this.ingest = new IngestDelivery(this, 'Ingest', { bucket: this.archive.bucket, logRetention });

    Validations.of(this).acknowledge({
      id: 'CloudFormation-Validate::W7001',
      reason:
        'The aws-kinesisfirehose L2 always adds its mapping of Firehose CIDR blocks (used only by Redshift, Splunk and HTTP endpoint destinations); an unused mapping changes nothing in the deployment.',
    });

    this.http = new FootfallHttpApi(this, 'Http', {
      throttle: { rateLimit: config.throttleRate, burstLimit: config.throttleBurst },
      logRetention,
    });

    // Webhook secrets are sealed under a key kept in Parameter Store (no KMS key fee: docs/security.md).
    // The KMS key of earlier releases stays only while their secrets are re-sealed (`legacySecretsKey`);
    // retained like the table, so leaving the template never deletes it (docs/deploy.md).
    if (config.legacySecretsKey) {
      this.secretsKey = new kms.Key(this, 'SecretsKey', {
        description: 'Footfall: envelope key of webhook signing secrets sealed before they moved to Parameter Store',
        enableKeyRotation: true,
        removalPolicy: RemovalPolicy.RETAIN,
      });
      new CfnOutput(this, 'SecretsKeyArn', {
        value: this.secretsKey.keyArn,
        description:
          'KMS key of webhook secrets sealed by earlier releases (footfall --aws --kms-key <arn> secrets reseal)',
      });
    }

    this.registry = props.functions ?? FUNCTIONS;
    for (const [fnName, spec] of deployedFunctions(this.registry, config)) {
      this.functions[fnName] = this.addFunction(fnName, spec, logRetention);
    }
    for (const [fnName, spec] of deployedFunctions(this.registry, config)) this.grantInvokes(fnName, spec);

    // The S3 notification of raw objects is configured by CDK's singleton custom resource.
    for (const child of this.node.children)
      if (child.node.id.startsWith('BucketNotificationsHandler'))
        Validations.of(child).acknowledge({
          id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
          reason:
            "CDK's bucket-notifications custom resource (aws-s3 addEventNotification): it runs at deploy time only, to put the events bucket's notification configuration, and writes its own logs with the managed basic execution role.",
        });

    this.addAlarms();
    this.notifyAlarms();

    const { event: eventUrl, tracker: trackerUrl } = this.functionUrls;
    if (config.app) {
      // The random part of the stack id (`arn:…:stack/<name>/<uuid>`), made by CloudFormation when the stack is
      // created and never shown to a visitor: what CloudFront adds to the app's API requests, and what the app
      // function compares it with before it trusts CloudFront-Viewer-Address (lambdas/handlers/app.ts).
      const originSecret = Fn.select(2, Fn.split('/', Aws.STACK_ID));
      this.functions.app?.fn.addEnvironment('ORIGIN_SECRET', originSecret);
      // What the app offers (lambdas/handlers/app.ts `capabilities`): filters and properties only where the report
      // and MCP functions have the filtered engine, so a stack without it shows no dead filter.
      if (config.filteredReports) this.functions.app?.fn.addEnvironment('FILTERED_REPORTS', 'true');
      const { appDomain, appCertificateArn } = config;
      if (appDomain && !appCertificateArn)
        throw new Error(
          `appDomain ${appDomain} needs -c appCertificateArn=<arn in us-east-1>: deploy ${certificateStackName(this.stackName)} first and pass its CertificateArn output (docs/deploy.md, "Custom domain")`,
        );
      this.app = new AppDistribution(this, 'App', {
        api: this.http.api,
        mcpUrl: this.functionUrls.mcp,
        hotPathUrls: eventUrl && trackerUrl ? { event: eventUrl, tracker: trackerUrl } : undefined,
        accessLogs,
        originSecret,
        logRetention,
        domain: appDomain && appCertificateArn ? { name: appDomain, certificateArn: appCertificateArn } : undefined,
      });
      // First-party: the script served on the app's domain posts to that domain, not to the event function's URL.
      if (appDomain) this.functions.tracker?.fn.addEnvironment('EVENT_URL', `https://${appDomain}/api/event`);
      // The MCP transport's Origin check (lambdas/handlers/mcp.ts, docs/mcp.md "Origin"): the owner's list. The
      // distribution's own domain cannot be passed: the distribution routes /mcp to this function's URL, so the
      // function's environment naming the distribution would be a circular dependency in CloudFormation.
      // A custom domain is known before deploy, so it is allowed without the cycle.
      const origins = [...config.mcpOrigins, ...(appDomain ? [`https://${appDomain}`] : [])];
      this.functions.mcp?.fn.addEnvironment('APP_ORIGINS', origins.join(','));
      const scheduled = this.functions.scheduled;
      if (config.reportSender && scheduled)
        sendReports(
          this,
          { scheduled, app: this.functions.app },
          config.reportSender,
          `https://${appDomain ?? this.app.distribution.distributionDomainName}`,
        );
    }
    if (config.monthlyBudgetUsd !== undefined)
      addBudget(this, {
        monthlyUsd: config.monthlyBudgetUsd,
        email: config.alarmEmail,
        topicArn: config.alarmTopicArn,
      });

    new CfnOutput(this, 'ApiUrl', { value: this.http.url, description: 'Base URL of the HTTP API' });
    new CfnOutput(this, 'TableName', {
      value: this.table.tableName,
      description: 'DynamoDB table (footfall --aws --table <name>)',
    });
    new CfnOutput(this, STACK_INGEST_OUTPUTS.delivery, {
      value: this.ingest.deliveryStream.deliveryStreamName,
      description: 'Firehose delivery stream of raw events (raw/ of the events bucket), read by the sessionizer',
    });
    if (this.stream)
      new CfnOutput(this, STACK_INGEST_OUTPUTS.stream, {
        value: this.stream.streamName,
        description: 'Kinesis event stream (draining)',
      });
    new CfnOutput(this, 'EventsBucket', {
      value: this.archive.bucket.bucketName,
      description: 'Raw Parquet events (events/site=/dt=)',
    });
    new CfnOutput(this, 'GlueDatabase', { value: name, description: 'Glue database of the events table' });
    new CfnOutput(this, 'AthenaWorkGroup', {
      value: this.archive.workGroup.ref,
      description: 'Athena workgroup with the named queries',
    });
    // What `footfall upgrade check --aws` compares with the release about to be deployed (docs/deploy.md, "Upgrading").
    new CfnOutput(this, STACK_VERSION_OUTPUTS.version, {
      value: RELEASE_VERSION,
      description: 'Footfall release deployed',
    });
    new CfnOutput(this, STACK_VERSION_OUTPUTS.layout, {
      value: String(DATA_LAYOUT),
      description: 'Storage layout of derived items this release reads (DATA_LAYOUT)',
    });
  }

  /** Builds, grants and wires one registry entry. */
  private addFunction(fnName: string, spec: FunctionSpec, logRetention: logs.RetentionDays): FootfallFunction {
    const visitTable = this.config.filteredReports ? spec.visitTable : undefined;
    const fn = new FootfallFunction(this, fnName, {
      entry: spec.entry,
      service: fnName,
      description: spec.description,
      // DuckDB's scans: a full vCPU for a reader, at least as much for the writer (`FILTERED_MEMORY_MIB`).
      memorySize: visitTable ? Math.max(spec.memoryMiB ?? 0, FILTERED_MEMORY_MIB) : spec.memoryMiB,
      ...(visitTable
        ? { architecture: DUCKDB_ARCHITECTURE, ephemeralStorageSize: VISIT_TABLE_EPHEMERAL, duckdbChunk: true }
        : {}),
      // A filtered read of a long range is CPU-bound seconds of DuckDB: up to API Gateway's 30 s, not the default 10,
      // for the filtered function and for the report and MCP functions that wait for it.
      timeout:
        visitTable === 'read' || this.invokesFiltered(spec)
          ? Duration.seconds(FILTERED_TIMEOUT_SECONDS)
          : spec.timeoutSeconds === undefined
            ? undefined
            : Duration.seconds(spec.timeoutSeconds),
      environment: spec.env,
      logRetention,
      // The hot path records no trace unless asked (`hotPathTracing`): HTTP APIs never sample a request, so PassThrough traces nothing.
      tracing: spec.hotPath && !this.config.hotPathTracing ? lambda.Tracing.PASS_THROUGH : lambda.Tracing.ACTIVE,
      hotPathLogging: spec.hotPath,
      // The sessionizer: one instance, the journal's one writer (lib/lambda-defaults.ts consumeDelivery).
      reservedConcurrency: spec.hotPath
        ? this.config.hotPathConcurrency
        : spec.stream === 'consume'
          ? 1
          : spec.reservedConcurrency,
    });
    if (spec.table)
      fn.bindTable(this.table, spec.table, {
        read: spec.readPartitions,
        write: spec.writePartitions,
        updates: (spec.attributeUpdates ?? []).filter((u) => this.config.filteredReports || !u.filteredOnly),
      });
    if (spec.secrets) {
      // The key pair's parameters: the app function reads (and first creates) the public key and may only
      // create private keys; the webhook function alone reads them (docs/security.md).
      const names = secretsParameterNames(this.stackName);
      const arn = (name: string) =>
        this.formatArn({ service: 'ssm', resource: 'parameter', resourceName: name.slice(1) });
      fn.fn.addEnvironment('SECRETS_STACK', this.stackName);
      const grants: Array<[string[], string]> =
        spec.secrets === 'seal'
          ? [
              [['ssm:GetParameter', 'ssm:PutParameter'], arn(names.publicKey)],
              [['ssm:PutParameter'], arn(`${names.privateKeys}/*`)],
            ]
          : [[['ssm:GetParameter'], arn(`${names.privateKeys}/*`)]];
      for (const [actions, resource] of grants)
        fn.fn.addToRolePolicy(new iam.PolicyStatement({ actions, resources: [resource] }));
      Validations.of(fn).acknowledge({
        id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ssm:<AWS::Region>:<AWS::AccountId>:parameter${names.privateKeys}/*]`,
        reason:
          "The private keys of the webhook secrets are named by their fingerprint, unknown at deploy (the first seal creates the pair: CloudFormation cannot create a SecureString); the wildcard covers this stack's secrets-key path only (docs/security.md).",
      });
      // Secrets sealed under the old KMS key open until re-sealed; nothing is sealed under it any more.
      if (this.secretsKey) {
        fn.fn.addEnvironment('LEGACY_SECRETS_KEY_ID', this.secretsKey.keyArn);
        this.secretsKey.grant(fn.fn, 'kms:Decrypt');
      }
    }
    if (spec.archive === 'erase') this.archive.grantErasure(fn.fn, fn.role);
    if (visitTable) {
      this.duckdb ??= duckdbLayer(this);
      fn.fn.addLayers(this.duckdb);
      grantVisitTable(fn.fn, fn.role, this.archive.bucket, visitTable);
    }
    // The sessionizer forwards each raw object's events to the archive (docs/ingestion.md, "Archive packed").
    if (spec.stream === 'consume')
      fn.consumeDelivery(this.archive.bucket, this.stream).putDelivery('ARCHIVE_STREAM', this.archive.deliveryStream);
    else if (spec.stream) fn.putDelivery('INGEST_STREAM', this.ingest.deliveryStream);

    for (const route of spec.routes ?? []) {
      const routes = fn.addRoute(
        this.http.api,
        route.path,
        route.methods.map((m) => m as apigwv2.HttpMethod),
      );
      for (const r of routes) {
        Validations.of(r).acknowledge({
          id: 'AwsSolutions-APIG4',
          reason: `${r.node.id}: public by design (the tracker posts without credentials, docs/security.md "API keys"; /v.js and /health are public); routes that need a key (report API, bearer key) check it in the handler so a revoked key stops working on the next request (docs/security.md "API keys"), and webhooks verify the provider's signature.`,
        });
      }
    }
    if (spec.url) {
      const url = fn.addPublicUrl();
      this.functionUrls[fnName] = url;
      new CfnOutput(this, spec.url.output, {
        value: this.publicUrl(fnName, spec),
        description: spec.url.description ?? `${fnName}: public function URL`,
      });
    }
    for (const [variable, target] of Object.entries(spec.urlEnv ?? {})) {
      fn.fn.addEnvironment(variable, this.publicUrl(target, this.registry[target]));
    }
    if (spec.maxEventAgeSeconds !== undefined)
      fn.fn.configureAsyncInvoke({ maxEventAge: Duration.seconds(spec.maxEventAgeSeconds) });
    if (spec.everyMinutes !== undefined) {
      fn.addSchedule(events.Schedule.rate(Duration.minutes(spec.everyMinutes)));
    }
    if (spec.countryDatabase) {
      const { layer, path } = this.countryDatabaseLayer();
      fn.fn.addLayers(layer);
      fn.fn.addEnvironment('GEO_DATABASE_PATH', path);
    }
    return fn;
  }

  /**
   * `spec.invokes`: `lambda:InvokeFunction` on each target, and its name as `<NAME>_FUNCTION`. In a policy of its
   * own, not the role's default one: a function's grant on itself would make the function depend on a policy
   * that names its own ARN, a cycle CloudFormation refuses.
   */
  private grantInvokes(fnName: string, spec: FunctionSpec): void {
    // The filtered function exists only with the flag: without it its callers invoke nothing for it.
    const invokes = [
      ...(spec.invokes ?? []).filter((name) => this.config.filteredReports || !this.registry[name]?.filteredOnly),
      ...(this.config.filteredReports ? (spec.invokesWithFilters ?? []) : []),
    ];
    if (!invokes.length) return;
    const fn = this.functions[fnName]!;
    const targets = invokes.map((name) => {
      const target = this.functions[name];
      if (!target) throw new Error(`function ${fnName} invokes ${name}, which is not deployed`);
      if (name !== fnName) fn.fn.addEnvironment(`${name.toUpperCase()}_FUNCTION`, target.fn.functionName);
      return target.fn.functionArn;
    });
    new iam.Policy(this, `${fnName}RoleInvokePolicy`, {
      roles: [fn.role],
      statements: [new iam.PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: targets })],
    });
  }

  /** Whether the function waits for the filtered function in this stack (`invokes` it, with `-c filteredReports=true`). */
  private invokesFiltered(spec: FunctionSpec): boolean {
    return this.config.filteredReports && (spec.invokes ?? []).some((name) => this.registry[name]?.filteredOnly);
  }

  /**
   * A function's public URL followed by its `url.path` (a token until deploy).
   * @throws Error when the function has no URL yet (not in the registry, no `url`, or later in it)
   */
  private publicUrl(fnName: string, spec: FunctionSpec | undefined): string {
    const url = this.functionUrls[fnName];
    if (!url || !spec?.url)
      throw new Error(`function ${fnName} has no public URL (it needs \`url\` and must come earlier in the registry)`);
    return spec.url.path ? Fn.join('', [url.url, spec.url.path]) : url.url;
  }

  /**
   * The IP-to-country database as a Lambda layer (`docs/ingestion.md`
   * "Country"): the .mmdb file and its licence, outside the function's 300 KB
   * bundle, extracted by Lambda under /opt and read once per execution
   * environment. Built once per stack; the file is checked at synth.
   */
  private countryDatabaseLayer(): { layer: lambda.LayerVersion; path: string } {
    if (this.countryLayer) return this.countryLayer;
    const file = resolve(this.config.geoDatabase ?? PACKAGED_COUNTRY_DATABASE);
    const { info } = CountryDatabase.open(file);
    const layer = new lambda.LayerVersion(this, 'CountryDatabase', {
      code: lambda.Code.fromAsset(dirname(file), { exclude: ['*', `!${basename(file)}`, '!*LICENSE*'] }),
      compatibleRuntimes: [RUNTIME],
      compatibleArchitectures: [ARCHITECTURE],
      description: `Footfall IP-to-country database: ${basename(file)} (${info.type}), built ${info.built.toISOString().slice(0, 10)}`,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.countryLayer = { layer, path: `/opt/${basename(file)}` };
    return this.countryLayer;
  }

  /**
   * An alarm on the 5xx count of one metric (Sum over 5 minutes): above 0 in `API_5XX_ALARM.datapoints` of
   * `API_5XX_ALARM.periods` periods. One metric, so one alarm metric billed (`docs/cost.md`): below 100 requests
   * a period, any 5xx is already more than 1% of them, so it pages when a rate alarm of 1% would.
   */
  private add5xxAlarm(id: string, what: string, errors: cloudwatch.IMetric): cloudwatch.Alarm {
    return new cloudwatch.Alarm(this, id, {
      alarmDescription: `${what}: requests answered 5xx in ${API_5XX_ALARM.datapoints} of ${API_5XX_ALARM.periods} five-minute periods`,
      metric: errors,
      threshold: 0,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: API_5XX_ALARM.periods,
      datapointsToAlarm: API_5XX_ALARM.datapoints,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
  }

  private addAlarms(): void {
    for (const [fnName, fn] of Object.entries(this.functions)) {
      if (!fn.failedBatches) continue;
      new cloudwatch.Alarm(this, `${fnName}FailedBatchesAlarm`, {
        alarmDescription: `${fnName}: invocations failed every retry (see the queue; their raw objects stay journaled and are retried by the next notification or sweep)`,
        metric: fn.failedBatches.metricApproximateNumberOfMessagesVisible({
          period: Duration.minutes(5),
          statistic: 'Maximum',
        }),
        threshold: 0,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
      if (!this.stream) continue;
      new cloudwatch.Alarm(this, `${fnName}IteratorAgeAlarm`, {
        alarmDescription: `${fnName}: falling behind the event stream (age of the last record read above ${this.config.iteratorAgeAlarmSeconds} s)`,
        metric: fn.fn.metric('IteratorAge', { period: Duration.minutes(1), statistic: 'Maximum' }),
        threshold: this.config.iteratorAgeAlarmSeconds * 1000,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 5,
        datapointsToAlarm: 3,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
    }

    const period = Duration.minutes(5);
    this.add5xxAlarm('Api5xxAlarm', 'HTTP API', this.http.api.metricServerError({ period, statistic: 'Sum' }));
    // The hot path's function URLs are not behind the HTTP API: their own metrics (AWS/Lambda, free):
    // Url5xxCount counts function errors and timeouts and the 503s the event handler answers when it cannot write.
    for (const [fnName, fn] of Object.entries(this.functions)) {
      if (!this.functionUrls[fnName] || !this.registry[fnName]?.hotPath) continue;
      this.add5xxAlarm(
        `${fnName}Url5xxAlarm`,
        `${fnName} function URL`,
        fn.fn.metric('Url5xxCount', { period, statistic: 'Sum' }),
      );
    }

    // Freshness of both deliveries: the archive's (Athena, rebuild) and the ingest delivery's, whose stall
    // stops every dashboard while the event endpoint still answers 202 (docs/deploy.md, "Metrics").
    const freshness = [
      ['ArchiveFreshnessAlarm', this.archive.deliveryStream, ARCHIVE_FRESHNESS_ALARM_SECONDS, 'the Parquet archive'],
      ['IngestFreshnessAlarm', this.ingest.deliveryStream, INGEST_FRESHNESS_ALARM_SECONDS, 'raw/ (the sessionizer)'],
    ] as const;
    for (const [id, delivery, seconds, what] of freshness)
      new cloudwatch.Alarm(this, id, {
        alarmDescription: `Firehose: the oldest record not yet delivered to ${what} is older than ${seconds / 60} minutes`,
        metric: new cloudwatch.Metric({
          namespace: 'AWS/Firehose',
          metricName: 'DeliveryToS3.DataFreshness',
          dimensionsMap: { DeliveryStreamName: delivery.deliveryStreamName },
          period,
          statistic: 'Maximum',
        }),
        threshold: seconds,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 2,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
    this.addArchiveFailureAlarms(period);

    // A scheduled function's failures are retried by its next run; several in a row mean rollup compaction
    // and re-crediting have stopped.
    for (const [fnName, fn] of Object.entries(this.functions)) {
      const every = this.registry[fnName]?.everyMinutes;
      if (every === undefined || this.registry[fnName]?.failureAlarm === false) continue;
      new cloudwatch.Alarm(this, `${fnName}ErrorsAlarm`, {
        alarmDescription: `${fnName}: ${SCHEDULED_FAILED_RUNS_ALARM} scheduled runs in a row failed (${this.registry[fnName]?.description ?? fnName}: stopped; see its log group)`,
        metric: fn.fn.metricErrors({ period: Duration.minutes(every), statistic: 'Sum' }),
        threshold: 0,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: SCHEDULED_FAILED_RUNS_ALARM,
        datapointsToAlarm: SCHEDULED_FAILED_RUNS_ALARM,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
    }
  }

  /**
   * The archive's silent failures (AWS/Firehose, free metrics, Amazon Data Firehose developer guide,
   * "Monitoring with CloudWatch metrics"): records that Parquet conversion rejected
   * (`FailedConversion.Records`, written to `errors/format-conversion-failed/` instead of the archive), and
   * dynamic partitioning past its active-partition limit (`PartitionCountExceeded` is 1, records go to
   * `errors/`), either of which keeps events out of Athena and `footfall rebuild` while delivery looks fresh.
   */
  private addArchiveFailureAlarms(period: Duration): void {
    const firehoseMetric = (metricName: string, statistic: string) =>
      new cloudwatch.Metric({
        namespace: 'AWS/Firehose',
        metricName,
        dimensionsMap: { DeliveryStreamName: this.archive.deliveryStream.deliveryStreamName },
        period,
        statistic,
      });
    const alarms = [
      [
        'ArchiveConversionAlarm',
        'FailedConversion.Records',
        'Sum',
        'records failed Parquet conversion (errors/format-conversion-failed/)',
      ],
      [
        'ArchivePartitionLimitAlarm',
        'PartitionCountExceeded',
        'Maximum',
        'over the active partition limit (site × day; records to errors/, ask for a quota increase)',
      ],
    ] as const;
    for (const [id, metricName, statistic, what] of alarms) {
      new cloudwatch.Alarm(this, id, {
        alarmDescription: `Firehose: ${what}; those events are not in the archive`,
        metric: firehoseMetric(metricName, statistic),
        threshold: 0,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
    }
  }

  /**
   * Gives every alarm of the stack an action (in ALARM and back to OK): an SNS topic with an email
   * subscription (`-c alarmEmail=`; the address confirms it once) and/or an existing topic
   * (`-c alarmTopicArn=`). Actions live in the template, so a deploy keeps them; with neither, the
   * alarms have none.
   */
  private notifyAlarms(): void {
    const topics: sns.ITopic[] = [];
    if (this.config.alarmTopicArn)
      topics.push(sns.Topic.fromTopicArn(this, 'AlarmTopicGiven', this.config.alarmTopicArn));
    if (this.config.alarmEmail) {
      const topic = new sns.Topic(this, 'AlarmTopic', {
        displayName: `Footfall alarms (${this.stackName})`,
        enforceSSL: true,
      });
      topic.addSubscription(new subscriptions.EmailSubscription(this.config.alarmEmail));
      Validations.of(topic).acknowledge({
        id: 'AwsSolutions-SNS2',
        reason:
          'Alarm notifications carry alarm names, states and metric values, no visitor or payment data; CloudWatch cannot publish to a topic encrypted with the AWS managed key, and a customer managed key for it would cost 1 USD a month.',
      });
      new CfnOutput(this, 'AlarmTopicArn', { value: topic.topicArn, description: 'SNS topic every alarm notifies' });
      topics.push(topic);
    }
    if (topics.length === 0) return;
    for (const alarm of this.node.findAll().filter((c): c is cloudwatch.Alarm => c instanceof cloudwatch.Alarm)) {
      for (const topic of topics) {
        alarm.addAlarmAction(new cloudwatchActions.SnsAction(topic));
        alarm.addOkAction(new cloudwatchActions.SnsAction(topic));
      }
    }
  }
}
