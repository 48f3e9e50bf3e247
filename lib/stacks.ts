import type { App, Stack } from 'aws-cdk-lib';
import { CertificateStack, certificateStackName } from './certificate-stack.js';
import type { FootfallConfig } from './config.js';
import { FootfallStack } from './footfall-stack.js';

/**
 * The stacks of the CDK app for `config`: the Footfall stack, or, when `appDomain` has no
 * `appCertificateArn` yet, only the `<stackName>Certificate` stack in us-east-1 that creates the
 * certificate (`docs/deploy.md`, "Custom domain", step 1). The Footfall stack is left out rather than
 * deployed without its domain, so `cdk deploy Footfall` stops until the ARN is passed; `log` says why.
 */
export function addStacks(app: App, config: FootfallConfig, options: { log: (line: string) => void }): Stack[] {
  if (config.appDomain && !config.appCertificateArn) {
    const name = certificateStackName(config.stackName);
    options.log(
      `appDomain ${config.appDomain} has no appCertificateArn: this app holds only ${name} (us-east-1). ` +
        `Deploy it, add the DNS record ACM asks for, then deploy ${config.stackName} with -c appCertificateArn=<its CertificateArn output>.`,
    );
    return [
      new CertificateStack(app, name, {
        domain: config.appDomain,
        env: { account: process.env.CDK_DEFAULT_ACCOUNT },
        description: `Footfall: the ACM certificate of ${config.appDomain} for CloudFront`,
      }),
    ];
  }
  return [
    new FootfallStack(app, config.stackName, {
      config,
      description: 'Footfall: self-hosted web analytics and revenue attribution',
    }),
  ];
}
