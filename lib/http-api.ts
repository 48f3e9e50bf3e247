import { RemovalPolicy } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';

export interface FootfallHttpApiProps {
  /** Default stage throttling: steady requests per second and burst. */
  throttle: { rateLimit: number; burstLimit: number };
  logRetention: logs.RetentionDays;
}

/**
 * One access log line per request, JSON, kept short because every tracked event writes one and
 * CloudWatch Logs bills ingestion by the byte ($0.50/GB, `docs/cost.md`): about 120 bytes a line
 * for an event, half of the 230 the longer field names took. `id` is API Gateway's request id, `t` the
 * request time (epoch ms), `ms` the response latency, `err` API Gateway's own error message
 * (throttling, a bad route) and `lambdaErr` the integration's (the function failed or timed out);
 * both are `-` when there was none. No source IP and no User-Agent: the raw IP is never stored
 * (`docs/security.md` "What is stored about a visitor"), access logs included.
 */
export const ACCESS_LOG_FIELDS = {
  id: '$context.requestId',
  t: '$context.requestTimeEpoch',
  route: '$context.routeKey',
  status: '$context.status',
  ms: '$context.responseLatency',
  err: '$context.error.message',
  lambdaErr: '$context.integration.error',
} as const;

/** The HTTP API (API Gateway v2) and its `$default` stage, throttled and access-logged. */
export class FootfallHttpApi extends Construct {
  readonly api: apigwv2.HttpApi;
  readonly stage: apigwv2.HttpStage;
  readonly accessLogs: logs.LogGroup;

  constructor(scope: Construct, id: string, props: FootfallHttpApiProps) {
    super(scope, id);
    this.api = new apigwv2.HttpApi(this, 'Api', {
      description: 'Footfall: tracking, ingestion and (app mode) the report API',
      createDefaultStage: false,
    });
    this.accessLogs = new logs.LogGroup(this, 'AccessLogs', {
      retention: props.logRetention,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.stage = this.api.addStage('DefaultStage', {
      stageName: '$default',
      autoDeploy: true,
      throttle: props.throttle,
      accessLogSettings: {
        destination: new apigwv2.LogGroupLogDestination(this.accessLogs),
        format: AccessLogFormat.custom(JSON.stringify(ACCESS_LOG_FIELDS)),
      },
    });
  }

  /** `https://{api-id}.execute-api.{region}.amazonaws.com/` (ends with `/`). */
  get url(): string {
    return this.stage.url;
  }
}
