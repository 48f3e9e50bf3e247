import type { Role } from './role.js';

/** A user as stored: one account each; no password until the set-password link is used. */
export interface User {
  email: string;
  account: string;
  created: string;
  password_hash: string | null;
  /**
   * Grows with each password change; a session holds the value it started
   * with, so a change ends every older session. It starts at a random value,
   * so the sessions of a removed user do not come back if the email is added again.
   */
  epoch: number;
  /** What the user may do in the account (`docs/security.md`, "Roles"); absent on older items: owner. */
  role: Role;
}

/** A user as the account's list shows it. */
export interface Member {
  email: string;
  created: string;
  status: 'active' | 'invited';
  role: Role;
}

/** A one-time link: an invitation (`invite`) or a set-password link from the CLI (`set-password`). */
export interface Invite {
  email: string;
  account: string;
  created: number;
  expires: number;
  /** The user's credential epoch when the link was made: the link works only while the user's epoch is still this. */
  epoch: number;
}

/** A signed-in session as stored: whose, and when it started and ends (ms since epoch). */
export interface Session {
  email: string;
  account: string;
  created: number;
  expires: number;
  /** The user's epoch when the session started (see `User.epoch`). */
  epoch: number;
}
