import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Me } from './api.js';

/** Who is signed in (`GET /api/app/me`), or null; `setMe` after sign-in and sign-out. */
export interface Auth {
  me: Me | null;
  setMe(me: Me | null): void;
}

export const AuthContext = createContext<Auth>({ me: null, setMe: () => undefined });

export const useAuth = (): Auth => useContext(AuthContext);

/** Where to go after sign-in: a same-app path only (never another origin: no open redirect). */
export function safeNext(next: string | undefined): string {
  return next && next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/sign-in') ? next : '/';
}
