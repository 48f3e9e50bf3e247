import * as z from 'zod';
import type { Provider } from './facts.js';

/** What a provider's history import asks of its user: the key, and an optional account scope within it. */
export interface HistoryKeySpec {
  /** The provider's name in messages (`Lemon Squeezy`). */
  label: string;
  /** The key's form (`docs/payments.md`, "Importing a provider's history", lists each key's minimum permissions). */
  keySchema: z.ZodType<string>;
  /** What the key is and where it is made, in a sentence. */
  keyHelp: string;
  /** An example of the key's start, for a form's placeholder. */
  placeholder: string;
  /** An extra id naming the account within what the key reads (one word), its help and form. */
  scope?: { name: string; description: string; schema: z.ZodType<string> };
}

/**
 * Each provider's import key, shared by `footfall import <provider>` and the app's "Import history"
 * (sources: https://docs.stripe.com/keys#limit-access, https://docs.lemonsqueezy.com/api/getting-started,
 * https://developer.paddle.com/api-reference/about/api-keys, https://polar.sh/docs/integrate/oat).
 */
export const HISTORY_KEYS: Readonly<Record<Provider, HistoryKeySpec>> = {
  stripe: {
    label: 'Stripe',
    // A secret key (`sk_…`) reads too, but can write: not advised.
    keySchema: z
      .string()
      .refine((k) => /^(rk|sk)_(test|live)_\w+$/.test(k), 'expected a Stripe restricted key rk_live_… (or rk_test_…)'),
    keyHelp: 'a restricted read-only key rk_…',
    placeholder: 'rk_live_…',
  },
  lemonsqueezy: {
    label: 'Lemon Squeezy',
    keySchema: z.string().refine((k) => /^[\w-]+\.[\w-]+\.[\w-]+$/.test(k), 'expected a Lemon Squeezy API key (eyJ…)'),
    keyHelp: 'an API key from Settings → API',
    placeholder: 'eyJ…',
    scope: {
      name: 'store',
      description: "only this store's objects (its numeric id), when the key reads several",
      schema: z.string().regex(/^\d+$/, 'expected a store id (digits)'),
    },
  },
  paddle: {
    label: 'Paddle',
    keySchema: z
      .string()
      .refine((k) => /^pdl_(live|sdbx)_apikey_\w+$/.test(k), 'expected a Paddle API key pdl_live_apikey_…'),
    keyHelp: 'an API key pdl_live_apikey_… with read permissions',
    placeholder: 'pdl_live_apikey_…',
  },
  polar: {
    label: 'Polar',
    keySchema: z
      .string()
      .refine((k) => /^polar_oat_\w+$/.test(k), 'expected a Polar organization access token polar_oat_…'),
    keyHelp: 'an organization access token polar_oat_… with orders:read and subscriptions:read',
    placeholder: 'polar_oat_…',
  },
};
