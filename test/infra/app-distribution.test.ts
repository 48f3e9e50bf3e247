import { beforeAll, describe, expect, it } from 'vitest';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { App as CdkApp, Stage } from 'aws-cdk-lib';
import { APP_DIST, ensureAppBuilt } from '../../app/build.js';
import { APP_CSP as APP_CONTENT_SECURITY_POLICY, appSecurityHeaders } from '../../app/headers.js';
import { EVENT_ORIGIN_HEADERS, SPA_REWRITE_FUNCTION } from '../../lib/app-distribution.js';
import { synth, type Synthesized } from './synth.js';

type Resource = { Type: string; Properties: Record<string, unknown> };
type Behavior = Record<string, unknown> & { PathPattern?: string; TargetOriginId: string };
type Statement = {
  Effect: string;
  Action: string | string[];
  Principal?: unknown;
  Condition?: Record<string, unknown>;
  Resource: unknown;
};

// Managed policy ids (CloudFront developer guide, "Use managed cache policies" and "Use managed origin request policies").
const CACHING_DISABLED = '4135ea2d-6df8-44a3-9df3-4b5a84be39ad';
const CACHING_OPTIMIZED = '658327ea-f89d-4fab-a63d-7e88639e58f6';
const ALL_VIEWER_EXCEPT_HOST_HEADER = 'b689b0a8-53d0-40ab-baf2-68738e2966ac';

const resources = (s: Synthesized, type: string) => s.template.findResources(type) as Record<string, Resource>;
const only = <T>(values: Record<string, T>): [string, T] => {
  const all = Object.entries(values);
  expect(all).toHaveLength(1);
  return all[0]!;
};

let app: Synthesized;
let config: {
  DefaultCacheBehavior: Behavior;
  CacheBehaviors: Behavior[];
  Origins: Array<Record<string, unknown> & { Id: string }>;
} & Record<string, unknown>;

beforeAll(async () => {
  await ensureAppBuilt();
  app = synth({ config: { app: true }, bundle: false });
  config = only(resources(app, 'AWS::CloudFront::Distribution'))[1].Properties.DistributionConfig as typeof config;
}, 120_000);

describe("the app's CloudFront distribution (app=true)", () => {
  it('serves the app from S3 through origin access control, with the SPA rewrite on the default behaviour only', () => {
    const s3Origin = config.Origins.find((o) => o.Id === config.DefaultCacheBehavior.TargetOriginId);
    expect(s3Origin).toMatchObject({
      S3OriginConfig: { OriginAccessIdentity: '' },
      OriginAccessControlId: { 'Fn::GetAtt': [expect.any(String), 'Id'] },
    });
    const [, oac] = only(resources(app, 'AWS::CloudFront::OriginAccessControl'));
    expect(oac.Properties.OriginAccessControlConfig).toMatchObject({
      OriginAccessControlOriginType: 's3',
      SigningBehavior: 'always',
      SigningProtocol: 'sigv4',
    });
    expect(config).toMatchObject({
      DefaultRootObject: 'index.html',
      Enabled: true,
      HttpVersion: 'http2and3',
      Logging: { Bucket: expect.anything() },
    });
    expect(config.DefaultCacheBehavior).toMatchObject({
      ViewerProtocolPolicy: 'redirect-to-https',
      CachePolicyId: CACHING_OPTIMIZED,
      AllowedMethods: ['GET', 'HEAD'],
      Compress: true,
      FunctionAssociations: [{ EventType: 'viewer-request', FunctionARN: expect.anything() }],
    });
    for (const b of config.CacheBehaviors) expect(b.FunctionAssociations, b.PathPattern).toBeUndefined();
    // Distribution-wide error pages would turn the API's JSON 404s into the app's HTML.
    expect(config.CustomErrorResponses).toBeUndefined();
    const [, fn] = only(resources(app, 'AWS::CloudFront::Function'));
    expect(fn.Properties).toMatchObject({
      FunctionCode: SPA_REWRITE_FUNCTION,
      FunctionConfig: { Runtime: 'cloudfront-js-2.0' },
      AutoPublish: true,
    });
  });

  it('sends /api/* and /health to the HTTP API, /api/event, /v.js and /mcp to their function URLs, uncached, every viewer header but Host forwarded', () => {
    expect(config.CacheBehaviors.map((b) => b.PathPattern)).toEqual([
      '/api/event',
      '/api/*',
      '/v.js',
      '/health',
      '/mcp',
    ]);
    const origin = (b: Behavior) => config.Origins.find((o) => o.Id === b.TargetOriginId)!;
    for (const b of config.CacheBehaviors) {
      expect(b, b.PathPattern).toMatchObject({
        ViewerProtocolPolicy: 'https-only',
        CachePolicyId: CACHING_DISABLED,
        AllowedMethods: ['GET', 'HEAD', 'OPTIONS', 'PUT', 'PATCH', 'POST', 'DELETE'],
      });
      if (b.PathPattern !== '/api/event')
        expect(b.OriginRequestPolicyId, b.PathPattern).toBe(ALL_VIEWER_EXCEPT_HOST_HEADER);
      expect(origin(b).CustomOriginConfig, b.PathPattern).toMatchObject({
        OriginProtocolPolicy: 'https-only',
        OriginSSLProtocols: ['TLSv1.2'],
      });
    }
    const [event, api, tracker, health, mcp] = config.CacheBehaviors as [
      Behavior,
      Behavior,
      Behavior,
      Behavior,
      Behavior,
    ];
    for (const b of [api, health])
      expect(JSON.stringify(origin(b).DomainName), b.PathPattern).toMatch(
        /"Fn::Select":\[2,\{"Fn::Split":\["\/",\{"Fn::GetAtt":\["HttpApi[0-9A-F]+","ApiEndpoint"\]\}\]\}\]/,
      );
    // The hot path through AppUrl pays CloudFront's requests only, not API Gateway's (docs/cost.md).
    expect(JSON.stringify(origin(event).DomainName)).toMatch(
      /"Fn::GetAtt":\["eventFunctionFunctionUrl[0-9A-F]+","FunctionUrl"\]/,
    );
    expect(JSON.stringify(origin(tracker).DomainName)).toMatch(
      /"Fn::GetAtt":\["trackerFunctionFunctionUrl[0-9A-F]+","FunctionUrl"\]/,
    );
    expect(JSON.stringify(origin(mcp).DomainName)).toMatch(
      /"Fn::GetAtt":\["mcpFunctionFunctionUrl[0-9A-F]+","FunctionUrl"\]/,
    );
  });

  it("sends the tracker's events with the viewer's address and country, so visitors are looked up and hashed on their own address", () => {
    const event = config.CacheBehaviors[0]!;
    expect(event.PathPattern).toBe('/api/event');
    const [policyId, policy] = only(resources(app, 'AWS::CloudFront::OriginRequestPolicy'));
    expect(event.OriginRequestPolicyId).toEqual({ Ref: policyId });
    expect(policy.Properties.OriginRequestPolicyConfig).toMatchObject({
      HeadersConfig: { HeaderBehavior: 'whitelist', Headers: [...EVENT_ORIGIN_HEADERS] },
      CookiesConfig: { CookieBehavior: 'none' },
      QueryStringsConfig: { QueryStringBehavior: 'none' },
    });
    expect(EVENT_ORIGIN_HEADERS).toEqual(
      expect.arrayContaining([
        'user-agent',
        'accept-language',
        'CloudFront-Viewer-Address',
        'CloudFront-Viewer-Country',
      ]),
    );
  });

  it('lets only the distribution read the app bucket, which blocks all public access', () => {
    const origin = config.Origins.find((o) => o.Id === config.DefaultCacheBehavior.TargetOriginId)!;
    const bucketId = (JSON.stringify(origin.DomainName).match(/"(AppAssets[0-9A-F]+)"/) ?? [])[1];
    expect(bucketId).toBeDefined();
    const bucket = resources(app, 'AWS::S3::Bucket')[bucketId!]!;
    expect(bucket.Properties.PublicAccessBlockConfiguration).toEqual({
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
    const policy = Object.values(resources(app, 'AWS::S3::BucketPolicy')).find((p) =>
      JSON.stringify(p.Properties.Bucket).includes(bucketId!),
    )!;
    const statements = (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement;
    const allows = statements.filter((s) => s.Effect === 'Allow');
    const [distributionId] = only(resources(app, 'AWS::CloudFront::Distribution'));
    expect(allows).toEqual([
      expect.objectContaining({
        Action: 's3:GetObject',
        Principal: { Service: 'cloudfront.amazonaws.com' },
        Condition: {
          StringEquals: {
            'AWS:SourceArn': expect.objectContaining({
              'Fn::Join': expect.arrayContaining([expect.arrayContaining([{ Ref: distributionId }])]),
            }),
          },
        },
      }),
    ]);
    // Everything else is a Deny (TLS only).
    expect(statements.filter((s) => s.Effect !== 'Allow' && s.Effect !== 'Deny')).toEqual([]);
    expect(
      statements.some((s) => s.Effect === 'Deny' && JSON.stringify(s.Condition).includes('aws:SecureTransport')),
    ).toBe(true);
  });

  it('puts the security headers on every behaviour: CSP with frame-ancestors none, HSTS, DENY, nosniff, referrer policy', () => {
    const [policyId, policy] = only(resources(app, 'AWS::CloudFront::ResponseHeadersPolicy'));
    const headers = policy.Properties.ResponseHeadersPolicyConfig as {
      SecurityHeadersConfig: Record<string, unknown>;
      CustomHeadersConfig: { Items: unknown[] };
    };
    expect(headers.SecurityHeadersConfig).toEqual({
      ContentSecurityPolicy: { ContentSecurityPolicy: APP_CONTENT_SECURITY_POLICY, Override: true },
      StrictTransportSecurity: { AccessControlMaxAgeSec: 63_072_000, IncludeSubdomains: true, Override: true }, // as APP_HSTS
      FrameOptions: { FrameOption: 'DENY', Override: true },
      ContentTypeOptions: { Override: true },
      ReferrerPolicy: { ReferrerPolicy: 'same-origin', Override: true },
    });
    expect(appSecurityHeaders(true)['strict-transport-security']).toBe('max-age=63072000; includeSubDomains');
    expect(APP_CONTENT_SECURITY_POLICY).toContain("frame-ancestors 'none'");
    expect(APP_CONTENT_SECURITY_POLICY).not.toMatch(/unsafe-inline|unsafe-eval|\*/);
    expect(headers.CustomHeadersConfig.Items).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ Header: 'Permissions-Policy' }),
        expect.objectContaining({ Header: 'Cross-Origin-Opener-Policy', Value: 'same-origin' }),
      ]),
    );
    for (const b of [config.DefaultCacheBehavior, ...config.CacheBehaviors])
      expect(b.ResponseHeadersPolicyId, b.PathPattern ?? 'default').toEqual({ Ref: policyId });
  });

  it('uploads app/dist: hashed assets immutable, index.html revalidated and invalidated on each deploy', () => {
    const deployments = Object.values(resources(app, 'Custom::CDKBucketDeployment')).map((d) => d.Properties);
    expect(deployments).toHaveLength(2);
    const assets = deployments.find((d) => !d.DistributionPaths)!;
    const index = deployments.find((d) => d.DistributionPaths)!;
    expect(assets).toMatchObject({
      Prune: false,
      SystemMetadata: { 'cache-control': 'public, max-age=31536000, immutable' },
    });
    expect(index).toMatchObject({
      Prune: false,
      DistributionPaths: ['/index.html'],
      SystemMetadata: { 'cache-control': 'no-cache' },
    });
  });

  it("uploads every file of the build: the entry, each page's chunk and the stylesheet, and index.html apart", () => {
    // The staged copy of each deployment's source, in the cloud assembly (`asset.<hash>`, zipped to `<hash>.zip`).
    const outdir = (Stage.of(app.stack) as CdkApp).outdir;
    const staged = (d: Record<string, unknown>) => {
      const [key] = d.SourceObjectKeys as string[];
      const dir = join(outdir, `asset.${key!.replace(/\.zip$/, '')}`);
      return readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => join(e.parentPath, e.name).slice(dir.length + 1))
        .sort();
    };
    const deployments = Object.values(resources(app, 'Custom::CDKBucketDeployment')).map((d) => d.Properties);
    const built = readdirSync(join(APP_DIST, 'assets')).map((f) => `assets/${f}`);
    // Not only the entry: the build has a chunk per page (app/src/pages.tsx).
    expect(built.filter((f) => f.endsWith('.js')).length).toBeGreaterThan(5);
    expect(staged(deployments.find((d) => !d.DistributionPaths)!)).toEqual(built.sort());
    expect(staged(deployments.find((d) => d.DistributionPaths)!)).toEqual(['index.html']);
  });

  it('prints the app URL and stays cdk-nag clean', () => {
    expect(JSON.stringify(app.template.findOutputs('AppUrl').AppUrl?.Value)).toMatch(/DomainName/);
    expect(app.nagViolations()).toEqual([]);
  });
});

describe('the SPA rewrite (CloudFront Function)', () => {
  const handler = new Function(`${SPA_REWRITE_FUNCTION}; return handler;`)() as (e: { request: { uri: string } }) => {
    uri: string;
  };
  it.each([
    ['/', '/index.html'],
    ['/sites/example.com', '/index.html'], // a domain: a dot, and still an app route
    ['/sites/example.com/visitors/abc.def', '/index.html'],
    ['/sites/example.com/payments', '/index.html'],
    ['/settings/keys', '/index.html'],
    ['/sign-in', '/index.html'],
    ['/index.html', '/index.html'],
    ['/assets/index-Bj9_xQxw.js', '/assets/index-Bj9_xQxw.js'],
    ['/assets/index-CwDTG6DG.css', '/assets/index-CwDTG6DG.css'],
    ['/assets/missing.js', '/assets/missing.js'], // S3's 403, not the app's HTML with 200
  ])('%s → %s', (uri, expected) => {
    expect(handler({ request: { uri } }).uri).toBe(expected);
  });
});
