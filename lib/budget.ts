import { CfnOutput, Stack } from 'aws-cdk-lib';
import * as budgets from 'aws-cdk-lib/aws-budgets';
import type { Construct } from 'constructs';

/**
 * The budget's alerts, in percent of the monthly amount: actual spend past 80% (time to look), past
 * 100%, and a forecast of the month past 100% (a flood on day 3 is seen before the money is spent).
 */
export const BUDGET_ALERTS = [
  { type: 'ACTUAL', percent: 80 },
  { type: 'ACTUAL', percent: 100 },
  { type: 'FORECASTED', percent: 100 },
] as const;

export interface BudgetProps {
  /** The monthly amount, in whole USD. */
  monthlyUsd: number;
  /** Mailed by AWS Budgets itself (an EMAIL subscriber: no SNS topic or confirmation needed). */
  email: string | undefined;
  /**
   * An SNS topic the alerts are published to; its access policy must let `budgets.amazonaws.com`
   * publish (AWS Budgets user guide, "Creating an Amazon SNS topic for budget notifications").
   */
  topicArn: string | undefined;
}

/**
 * The spend guard (`-c monthlyBudgetUsd=`): a monthly AWS Budgets cost budget of the account (the
 * whole account's unblended cost, not only this stack's: a cost-allocation tag filter would need the
 * owner to activate the tag in the billing console first) with the `BUDGET_ALERTS` notifications.
 * Budgets without actions cost nothing (AWS Budgets pricing). Alerts arrive hours after the spend:
 * AWS updates a budget's actual cost a few times a day (`docs/deploy.md`, "Spend guard").
 * @throws Error when neither `email` nor `topicArn` is given (`lib/config.ts` refuses that too)
 */
export function addBudget(scope: Construct, props: BudgetProps): budgets.CfnBudget {
  const subscribers: budgets.CfnBudget.SubscriberProperty[] = [
    ...(props.email ? [{ subscriptionType: 'EMAIL', address: props.email }] : []),
    ...(props.topicArn ? [{ subscriptionType: 'SNS', address: props.topicArn }] : []),
  ];
  if (subscribers.length === 0) throw new Error('monthlyBudgetUsd needs alarmEmail or alarmTopicArn');
  const budget = new budgets.CfnBudget(scope, 'MonthlyBudget', {
    budget: {
      budgetType: 'COST',
      timeUnit: 'MONTHLY',
      budgetLimit: { amount: props.monthlyUsd, unit: 'USD' },
    },
    notificationsWithSubscribers: BUDGET_ALERTS.map(({ type, percent }) => ({
      notification: {
        notificationType: type,
        comparisonOperator: 'GREATER_THAN',
        threshold: percent,
        thresholdType: 'PERCENTAGE',
      },
      subscribers,
    })),
  });
  new CfnOutput(Stack.of(scope), 'MonthlyBudgetName', {
    value: budget.ref,
    description: `AWS Budgets cost budget of ${props.monthlyUsd} USD a month (Billing console → Budgets)`,
  });
  return budget;
}
