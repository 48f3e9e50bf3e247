import { Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as ses from 'aws-cdk-lib/aws-ses';
import type { FootfallFunction } from './lambda-defaults.js';

/**
 * The name of the SES configuration set email reports are sent with: one per stack, so a second
 * stack in the account and region (`-c stackName=`) has its own. Letters, digits, `-` and `_`, at
 * most 64 characters (SES API v2 `CreateConfigurationSet`); a stack name is at most 40.
 */
export const reportConfigurationSetName = (stackName: string): string => `${stackName}-reports`;

/**
 * Email reports (`docs/deploy.md`, "Email reports"): the scheduled function sends as `sender`, a
 * verified SES identity, through the stack's configuration set, with `ses:SendEmail` on that
 * address's identity, its domain's (SES authorizes a send on either, "Identity and access
 * management in Amazon SES") and the configuration set (a send naming a configuration set is
 * authorized on it too, Service Authorization Reference, "Amazon Simple Email Service v2") and
 * no other; mails link to the app at `appUrl`.
 *
 * The configuration set adds an address that hard-bounces or complains to the account's
 * suppression list, whatever the account's own setting (accounts that began using SES before
 * the account-level list existed have it off: "Using the Amazon SES account-level suppression
 * list"), so a dead or unwilling recipient stops getting reports and stops counting against the
 * account's bounce and complaint rates. It bills nothing by itself.
 */
export function sendReports(
  stack: Stack,
  fns: { scheduled: FootfallFunction; app: FootfallFunction | undefined },
  sender: string,
  appUrl: string,
): ses.ConfigurationSet {
  // The name as a plain string, not the resource's Ref: the twin's policies (`local/iam/policies.json`) match it.
  const name = reportConfigurationSetName(stack.stackName);
  const configurationSet = new ses.ConfigurationSet(stack, 'ReportMail', {
    configurationSetName: name,
    suppressionReasons: ses.SuppressionReasons.BOUNCES_AND_COMPLAINTS,
  });
  const arn = (resource: string, name: string) => stack.formatArn({ service: 'ses', resource, resourceName: name });
  fns.scheduled.fn.addToRolePolicy(
    new iam.PolicyStatement({
      actions: ['ses:SendEmail'],
      resources: [arn('identity', sender), arn('identity', sender.split('@')[1]!), arn('configuration-set', name)],
    }),
  );
  // A send names the set, so the set exists before the function can run.
  fns.scheduled.fn.node.addDependency(configurationSet);
  fns.scheduled.fn.addEnvironment('REPORT_SENDER', sender);
  fns.scheduled.fn.addEnvironment('REPORT_CONFIGURATION_SET', name);
  // The settings page says whether reports are on.
  fns.app?.fn.addEnvironment('REPORT_SENDER', sender);
  fns.scheduled.fn.addEnvironment('APP_URL', appUrl);
  return configurationSet;
}
