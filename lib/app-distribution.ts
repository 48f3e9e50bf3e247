import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Aws, CfnOutput, Duration, Fn, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import * as acm from 'aws-cdk-lib/aws-certificatemanager';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as origins from 'aws-cdk-lib/aws-cloudfront-origins';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as cwlogs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as s3deploy from 'aws-cdk-lib/aws-s3-deployment';
import { Construct } from 'constructs';
import { APP_DIST } from '../app/build.js';
import { APP_CSP, IMMUTABLE_CACHE, REVALIDATE_CACHE, appSecurityHeaders } from '../app/headers.js';
import { ORIGIN_SECRET_HEADER } from '../lambdas/domain/client-address.js';
import { secureBucket } from './secure-bucket.js';

export interface AppDistributionProps {
  /** The HTTP API: `/api/*` and `/health` go to it, and `/api/event` and `/v.js` without `hotPathUrls`. */
  api: apigwv2.HttpApi;
  /** The MCP function URL: `/mcp` goes to it (`docs/architecture.md` "App mode"); none, no `/mcp` behaviour. */
  mcpUrl?: lambda.IFunctionUrl;
  /**
   * The hot path's function URLs: `/api/event` goes to the event function's and `/v.js` to the
   * tracker's, so a script loaded from `AppUrl` (or posting to it with `data-api`) costs no API
   * Gateway request (`docs/cost.md`).
   */
  hotPathUrls?: { event: lambda.IFunctionUrl; tracker: lambda.IFunctionUrl };
  /** Where the app bucket's S3 access logs go. */
  accessLogs: s3.IBucket;
  /** The built app (`npm run build:app`). @default app/dist */
  dist?: string;
  /**
   * Sent by CloudFront to the HTTP API as the `ORIGIN_SECRET_HEADER` origin custom header (a viewer's header of
   * that name is overwritten), so the app function trusts `CloudFront-Viewer-Address` only on requests that came
   * through this distribution, not on the public execute-api URL (`docs/security.md`).
   */
  originSecret: string;
  /** Retention of the deployment helper's log group. */
  logRetention: cwlogs.RetentionDays;
  /**
   * The app's own domain (`-c appDomain=`) and its ACM certificate in us-east-1 (`-c appCertificateArn=`);
   * none, the distribution's `*.cloudfront.net` name.
   */
  domain?: { name: string; certificateArn: string };
}

/**
 * A name for a CloudFront resource, which CloudFront keeps per account, not per region: the stack
 * name, the region and `suffix`, so two stacks of one account, or one stack name in two regions,
 * never ask for the same one (at most 40 + 1 + 14 + 1 + 8 characters: within the 64 of an origin
 * access control, `lib/config.ts` `stackName`).
 */
export function cloudFrontName(scope: Construct, suffix: string): string {
  return Fn.join('-', [Stack.of(scope).stackName, Aws.REGION, suffix]);
}

/**
 * CloudFront Function (cloudfront-js-2.0, viewer request) of the app's
 * default behaviour: every file of the build is under `/assets/` (Vite's
 * `assetsDir`, no public directory) except `index.html`, so any other path
 * is an app route (`/sites/example.com`, whose last segment has a dot too)
 * and is answered with `/index.html`, as the local server does
 * (`local/static-app.ts`). Only the default behaviour runs it, so `/api/*`
 * and `/mcp` never do.
 */
export const SPA_REWRITE_FUNCTION = `function handler(event) {
  var request = event.request;
  if (request.uri.indexOf('/assets/') !== 0) request.uri = '/index.html';
  return request;
}`;

/**
 * Headers CloudFront sends to the event function: the viewer's that it reads
 * (`user-agent`, `accept-language`; `content-type`, `origin`, `referer` for
 * its logs and CORS), and the two CloudFront adds, `CloudFront-Viewer-Address`
 * and `CloudFront-Viewer-Country` (CloudFront developer guide, "Add CloudFront
 * request headers"), which only an origin request policy that lists them
 * forwards. An allow-list, so nothing relies on what a managed policy holds.
 */
export const EVENT_ORIGIN_HEADERS = [
  'user-agent',
  'accept-language',
  'content-type',
  'origin',
  'referer',
  'CloudFront-Viewer-Address',
  'CloudFront-Viewer-Country',
] as const;

/**
 * The app in AWS (`docs/architecture.md` "App mode", `docs/app.md` "In AWS"): one CloudFront
 * distribution whose default behaviour serves the built app from a private
 * S3 bucket through origin access control, and whose `/api/*` and `/health`
 * behaviours go to the HTTP API, `/api/event`, `/v.js` and `/mcp` to their
 * functions' URLs, all uncached, so the session cookie is first-party and `{base}/mcp` works.
 * Every response carries the app's security headers (`app/headers.ts`, the
 * local server's too).
 *
 * The SPA fallback is a CloudFront Function on the default behaviour that
 * sends app routes (anything outside `/assets/`) to `/index.html`.
 * Custom error responses (403/404 → /index.html) would do it too, but they
 * apply to the whole distribution and would turn the API's JSON 404s and
 * 403s into the app's HTML with 200.
 */
export class AppDistribution extends Construct {
  readonly bucket: s3.Bucket;
  readonly distribution: cloudfront.Distribution;
  readonly headers: cloudfront.ResponseHeadersPolicy;

  constructor(scope: Construct, id: string, props: AppDistributionProps) {
    super(scope, id);
    const dist = props.dist ?? APP_DIST;
    if (!existsSync(join(dist, 'index.html')))
      throw new Error(`the app is not built (${dist}/index.html is missing): run npm run build:app`);

    this.bucket = secureBucket(this, 'Assets', { accessLogs: props.accessLogs });

    // CloudFront standard logs are written with ACLs, so their bucket keeps object ownership for the writer.
    const logs = new s3.Bucket(this, 'CdnLogs', {
      encryption: s3.BucketEncryption.S3_MANAGED,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      objectOwnership: s3.ObjectOwnership.OBJECT_WRITER,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      lifecycleRules: [{ id: 'expire-cdn-logs', expiration: Duration.days(90) }],
      serverAccessLogsBucket: props.accessLogs,
      serverAccessLogsPrefix: 'CdnLogs/',
    });

    const headers = appSecurityHeaders(true);
    this.headers = new cloudfront.ResponseHeadersPolicy(this, 'SecurityHeaders', {
      responseHeadersPolicyName: cloudFrontName(this, 'headers'),
      comment: 'Footfall app: CSP, HSTS, no framing, nosniff, referrer policy',
      securityHeadersBehavior: {
        contentSecurityPolicy: { contentSecurityPolicy: APP_CSP, override: true },
        strictTransportSecurity: {
          accessControlMaxAge: Duration.seconds(63_072_000),
          includeSubdomains: true,
          override: true,
        },
        frameOptions: { frameOption: cloudfront.HeadersFrameOption.DENY, override: true },
        contentTypeOptions: { override: true },
        referrerPolicy: { referrerPolicy: cloudfront.HeadersReferrerPolicy.SAME_ORIGIN, override: true },
      },
      customHeadersBehavior: {
        customHeaders: [
          { header: 'Permissions-Policy', value: headers['permissions-policy']!, override: true },
          { header: 'Cross-Origin-Opener-Policy', value: headers['cross-origin-opener-policy']!, override: true },
        ],
      },
    });

    const spaRewrite = new cloudfront.Function(this, 'SpaRewrite', {
      comment: 'Footfall app: app routes to /index.html',
      runtime: cloudfront.FunctionRuntime.JS_2_0,
      code: cloudfront.FunctionCode.fromInline(SPA_REWRITE_FUNCTION),
    });

    // API Gateway and function URLs answer only for their own host, so the viewer's Host is not forwarded.
    const passThrough = {
      viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.HTTPS_ONLY,
      allowedMethods: cloudfront.AllowedMethods.ALLOW_ALL,
      cachePolicy: cloudfront.CachePolicy.CACHING_DISABLED,
      originRequestPolicy: cloudfront.OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
      responseHeadersPolicy: this.headers,
      compress: true,
    };
    // The tracker's endpoint names the headers it reads (lambdas/handlers/event.ts) and asks CloudFront
    // for the viewer's address and country: behind the distribution API Gateway sees the edge's address,
    // and visitors must be looked up and hashed on their own (docs/ingestion.md, "Country").
    const eventHeaders = new cloudfront.OriginRequestPolicy(this, 'EventHeaders', {
      originRequestPolicyName: cloudFrontName(this, 'event'),
      comment: 'Footfall /api/event: the headers the event function reads, and the viewer address and country',
      headerBehavior: cloudfront.OriginRequestHeaderBehavior.allowList(...EVENT_ORIGIN_HEADERS),
      cookieBehavior: cloudfront.OriginRequestCookieBehavior.none(),
      queryStringBehavior: cloudfront.OriginRequestQueryStringBehavior.none(),
    });
    const apiDomain = Fn.select(2, Fn.split('/', props.api.apiEndpoint));
    const apiOrigin = new origins.HttpOrigin(apiDomain, {
      protocolPolicy: cloudfront.OriginProtocolPolicy.HTTPS_ONLY,
      originSslProtocols: [cloudfront.OriginSslPolicy.TLS_V1_2],
      customHeaders: { [ORIGIN_SECRET_HEADER]: props.originSecret },
    });
    const assetsAccess = new cloudfront.S3OriginAccessControl(this, 'AssetsAccess', {
      originAccessControlName: cloudFrontName(this, 'assets'),
      description: 'Footfall app bucket: only this distribution reads it',
    });
    const hotPath = props.hotPathUrls;
    // With a certificate of our own the minimum protocol is ours to choose (TLS 1.2, the policy CloudFront recommends).
    const custom = props.domain && {
      domainNames: [props.domain.name],
      certificate: acm.Certificate.fromCertificateArn(this, 'Certificate', props.domain.certificateArn),
      minimumProtocolVersion: cloudfront.SecurityPolicyProtocol.TLS_V1_2_2021,
      sslSupportMethod: cloudfront.SSLMethod.SNI,
    };

    this.distribution = new cloudfront.Distribution(this, 'Distribution', {
      comment: `Footfall app of ${Stack.of(this).stackName}`,
      defaultRootObject: 'index.html',
      httpVersion: cloudfront.HttpVersion.HTTP2_AND_3,
      priceClass: cloudfront.PriceClass.PRICE_CLASS_100,
      enableLogging: true,
      logBucket: logs,
      logFilePrefix: 'cloudfront/',
      ...custom,
      defaultBehavior: {
        origin: origins.S3BucketOrigin.withOriginAccessControl(this.bucket, { originAccessControl: assetsAccess }),
        viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
        allowedMethods: cloudfront.AllowedMethods.ALLOW_GET_HEAD,
        cachePolicy: cloudfront.CachePolicy.CACHING_OPTIMIZED,
        responseHeadersPolicy: this.headers,
        compress: true,
        functionAssociations: [{ function: spaRewrite, eventType: cloudfront.FunctionEventType.VIEWER_REQUEST }],
      },
      additionalBehaviors: {
        // Before `/api/*`: CloudFront matches behaviours in this order.
        '/api/event': {
          origin: hotPath ? new origins.FunctionUrlOrigin(hotPath.event) : apiOrigin,
          ...passThrough,
          originRequestPolicy: eventHeaders,
        },
        '/api/*': { origin: apiOrigin, ...passThrough },
        '/v.js': { origin: hotPath ? new origins.FunctionUrlOrigin(hotPath.tracker) : apiOrigin, ...passThrough },
        '/health': { origin: apiOrigin, ...passThrough },
        ...(props.mcpUrl ? { '/mcp': { origin: new origins.FunctionUrlOrigin(props.mcpUrl), ...passThrough } } : {}),
      },
    });

    // The deployment helper's own log group (one function serves both deployments), deleted with the stack:
    // otherwise CDK makes one that is retained for two years.
    const deployLogs = new cwlogs.LogGroup(this, 'DeployLogs', {
      retention: props.logRetention,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    // Hashed assets never change under their name; index.html is revalidated so a deploy shows at once.
    const assets = new s3deploy.BucketDeployment(this, 'DeployAssets', {
      sources: [s3deploy.Source.asset(dist, { exclude: ['index.html', '.source-hash'] })],
      destinationBucket: this.bucket,
      cacheControl: [s3deploy.CacheControl.fromString(IMMUTABLE_CACHE)],
      prune: false,
      memoryLimit: 512,
      logGroup: deployLogs,
    });
    const index = new s3deploy.BucketDeployment(this, 'DeployIndex', {
      // `*` leaves dot files in (the build's `.source-hash`): only index.html goes.
      sources: [s3deploy.Source.asset(dist, { exclude: ['*', '.*', '!index.html'] })],
      destinationBucket: this.bucket,
      cacheControl: [s3deploy.CacheControl.fromString(REVALIDATE_CACHE)],
      prune: false,
      distribution: this.distribution,
      distributionPaths: ['/index.html'],
      memoryLimit: 512,
      logGroup: deployLogs,
    });
    index.node.addDependency(assets);

    this.acknowledge(logs, props.domain === undefined);
    new CfnOutput(Stack.of(this), 'AppUrl', {
      value: `https://${props.domain?.name ?? this.distribution.distributionDomainName}/`,
      description: 'The app (dashboard, sign-in, settings), /api/v1, /mcp and /v.js on one origin',
    });
    if (props.domain)
      new CfnOutput(Stack.of(this), 'AppDomainTarget', {
        value: this.distribution.distributionDomainName,
        description: `Point ${props.domain.name} here: a CNAME record, or a Route 53 alias to the distribution`,
      });
  }

  private acknowledge(logs: s3.Bucket, defaultCertificate: boolean): void {
    Validations.of(this.distribution).acknowledge(
      {
        id: 'AwsSolutions-CFR1',
        reason:
          "Geo restriction is the owner's choice: the tracker must accept page views from every country their visitors come from, and the dashboard follows its users.",
      },
      {
        id: 'AwsSolutions-CFR2',
        reason:
          'No AWS WAF web ACL by default (about 6 USD a month before requests, more than the rest of a small install): sign-in attempts are rate-limited in the app and the HTTP API stage is throttled; an owner can attach a web ACL to the distribution.',
      },
    );
    if (defaultCertificate)
      Validations.of(this.distribution).acknowledge({
        id: 'AwsSolutions-CFR4',
        reason:
          'The distribution uses the default *.cloudfront.net certificate, whose security policy CloudFront fixes at TLSv1 (a minimum protocol needs a custom domain and ACM certificate: -c appDomain=); browsers negotiate TLS 1.2 or 1.3, and HSTS keeps them on HTTPS.',
      });
    Validations.of(logs).acknowledge({
      id: 'AwsSolutions-S1',
      reason:
        "It does log: its server access logs go to the stack's access log bucket; cdk-nag does not follow that setting on a bucket whose ownership allows the ACLs CloudFront logging needs.",
    });
    // The CDK-provided Lambda behind BucketDeployment (aws s3 sync, CloudFront invalidation).
    for (const child of Stack.of(this).node.findAll()) {
      if (!child.node.path.includes('Custom::CDKBucketDeployment')) continue;
      Validations.of(child).acknowledge(
        {
          id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
          reason:
            'The CDK BucketDeployment provider (aws-cdk-lib, not ours) logs to CloudWatch with the AWS managed basic execution role; it runs only during deployments.',
        },
        {
          id: 'AwsSolutions-L1',
          reason:
            "The CDK BucketDeployment provider's runtime is chosen by aws-cdk-lib (Python with the AWS CLI layer), not by this stack, and moves with aws-cdk-lib upgrades; it runs only during deployments.",
        },
        ...[
          'Action::s3:Abort*',
          'Action::s3:DeleteObject*',
          'Action::s3:GetBucket*',
          'Action::s3:GetObject*',
          'Action::s3:List*',
          'Resource::<AppAssets2306EFD2.Arn>/*',
          'Resource::arn:<AWS::Partition>:s3:::cdk-hnb659fds-assets-<AWS::AccountId>-<AWS::Region>/*',
          'Resource::*',
        ].map((finding) => ({
          id: `AwsSolutions-IAM5[${finding}]`,
          reason:
            'The CDK BucketDeployment provider copies the app from the CDK asset bucket to the app bucket (object wildcards inside those two buckets) and invalidates /index.html (cloudfront:CreateInvalidation has no narrower resource here); the grants are written by aws-cdk-lib.',
        })),
      );
    }
  }
}
