import * as z from 'zod';

/**
 * A user's role in their account (`docs/security.md`, "Roles"), as Plausible's team roles: an
 * owner manages the account (sites, payment providers, API keys, users and their roles); a member
 * reads every report of the account's sites and changes only their own password.
 */
export const ROLES = ['owner', 'member'] as const;
export type Role = (typeof ROLES)[number];

export const roleSchema = z.enum(ROLES, 'Choose owner or member.');

/**
 * The role of a stored user or membership item. Items written before roles existed have no `role`
 * attribute: their users made the account and managed everything, so they read as owners (a
 * migration by read, `docs/data-model.md`); any other value that is not `owner` reads as a member.
 */
export function storedRole(value: unknown): Role {
  return value === undefined || value === 'owner' ? 'owner' : 'member';
}

/** Whether `role` may use a route that needs `needed` (`owner` needs an owner; `user` any signed-in user). */
export function roleAllows(role: Role, needed: 'user' | 'owner'): boolean {
  return needed === 'user' || role === 'owner';
}

/**
 * Whether an account still has an owner after `email` becomes `next` (a role, or `removed`): the
 * rule that an account always keeps at least one owner. `members` are the account's users now.
 */
export function keepsAnOwner(
  members: ReadonlyArray<{ email: string; role: Role }>,
  email: string,
  next: Role | 'removed',
): boolean {
  return members.some((m) => (m.email === email ? next === 'owner' : m.role === 'owner'));
}
