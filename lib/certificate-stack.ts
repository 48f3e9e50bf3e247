import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import * as acm from 'aws-cdk-lib/aws-certificatemanager';
import type { Construct } from 'constructs';

/** The region CloudFront reads viewer certificates from (CloudFront developer guide, "Requirements for using SSL/TLS certificates with CloudFront"). */
export const CLOUDFRONT_CERTIFICATE_REGION = 'us-east-1';

/** The certificate stack's name for a Footfall stack name: `<stackName>Certificate`. */
export function certificateStackName(stackName: string): string {
  return `${stackName}Certificate`;
}

export interface CertificateStackProps extends StackProps {
  /** The app's domain (`-c appDomain=`). */
  domain: string;
}

/**
 * The app's ACM certificate, in its own stack pinned to us-east-1, for a Footfall stack in any region:
 * a stack creates resources in its own region only, and CDK's cross-region references need both
 * stacks bound to an account and region at synth while the Footfall stack is environment-agnostic,
 * so the ARN crosses by hand: deploy this stack, then the Footfall stack with
 * `-c appCertificateArn=<its CertificateArn output>` (`docs/deploy.md`, "Custom domain").
 * DNS validation: CloudFormation waits (up to 72 hours) until the CNAME record ACM asks for, shown in
 * the stack's events and by `aws acm describe-certificate`, resolves; ACM renews it while the record stays.
 */
export class CertificateStack extends Stack {
  readonly certificate: acm.Certificate;

  constructor(scope: Construct, id: string, props: CertificateStackProps) {
    super(scope, id, {
      ...props,
      env: { account: props.env?.account, region: CLOUDFRONT_CERTIFICATE_REGION },
    });
    this.certificate = new acm.Certificate(this, 'Certificate', {
      domainName: props.domain,
      validation: acm.CertificateValidation.fromDns(),
    });
    new CfnOutput(this, 'CertificateArn', {
      value: this.certificate.certificateArn,
      description: `Certificate of ${props.domain}: pass it as -c appCertificateArn= to the Footfall stack`,
    });
  }
}
