import type { JSX } from 'preact';
import { useRoute } from 'preact-iso';
import { AccountSection } from './settings-account.js';
import { KeysSection } from './settings-keys.js';
import { SiteSettings, SitesSection } from './settings-sites.js';
import { UsersSection } from './settings-users.js';

const SECTIONS = [
  { id: 'keys', label: 'API keys' },
  { id: 'sites', label: 'Sites' },
  { id: 'users', label: 'Users' },
  { id: 'account', label: 'Account' },
] as const;

/** `/settings/<section>[/<site>]`: account settings (`docs/app.md` "Settings: users and account"). */
export function Settings(): JSX.Element {
  const { params } = useRoute();
  const section = SECTIONS.find((s) => s.id === params.section)?.id ?? 'keys';
  return (
    <div class="page settings">
      <h1>Settings</h1>
      <div class="settings-grid">
        <nav class="side-nav" aria-label="Settings">
          {SECTIONS.map((s) => (
            <a key={s.id} href={`/settings/${s.id}`} aria-current={s.id === section ? 'page' : undefined}>
              {s.label}
            </a>
          ))}
        </nav>
        <div class="settings-body">
          {section === 'keys' ? <KeysSection /> : null}
          {section === 'sites' ? params.item ? <SiteSettings domain={params.item} /> : <SitesSection /> : null}
          {section === 'users' ? <UsersSection /> : null}
          {section === 'account' ? <AccountSection /> : null}
        </div>
      </div>
    </div>
  );
}
