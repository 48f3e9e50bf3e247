import { Command } from 'commander';
import { DynamoConfigStore } from '../lambdas/adapters/dynamo/config-store.js';
import { DynamoUserStore } from '../lambdas/adapters/dynamo/user-store.js';
import { accountIdSchema } from '../lambdas/domain/site.js';
import { ConflictError } from '../lambdas/domain/errors.js';
import { emailSchema, setUserRole } from '../lambdas/services/account-settings.js';
import { ROLES, roleSchema, type Role } from '../lambdas/domain/auth/role.js';
import { createInvite, invitePath, INVITE_TTL_MS } from '../lambdas/services/auth.js';
import { contextOf, parseArgs, UsageError, type CliContext } from './main.js';
import { formatTable } from './output.js';
import { withStore } from './store.js';
import { baseUrl } from './urls.js';

/** The base of the set-password links: see `baseUrl`. @throws UsageError with `--aws` and no `--url` (the stack's app URL is not known here) */
async function linkBase(ctx: CliContext, url: string | undefined): Promise<string> {
  const base = await baseUrl(ctx, url);
  if (base === null)
    throw new UsageError(
      "--url is required with --aws: the app's address, e.g. https://stats.example.com (the AppUrl output of the stack)",
    );
  return base;
}

const days = Math.round(INVITE_TTL_MS / 86_400_000);

const roleHelp = `${ROLES.join(' or ')}: an owner manages the account, a member reads its reports (docs/security.md)`;

/** `users add|list|link|role`: the people who sign in to the app and their roles (docs/app.md, docs/security.md). */
export function registerUserCommands(program: Command): void {
  const users = program.command('users').description('manage the users who sign in to the app');
  users
    .command('add <email>')
    .description(
      `add a user to an account and print a one-time link (valid ${days} days) where they set their password`,
    )
    .requiredOption('--account <id>', 'the account the user belongs to')
    .option('--role <role>', `${roleHelp} (default: owner for the account's first user, member after)`)
    .option('--url <base>', "the app's address for the link (default: the running local server)")
    .action(async (email: string, opts: { account: string; role?: string; url?: string }, command: Command) => {
      const ctx = contextOf(command);
      const address = parseArgs(emailSchema, email, '<email>');
      const account = parseArgs(accountIdSchema, opts.account, '--account');
      const asked = opts.role === undefined ? undefined : parseArgs(roleSchema, opts.role, '--role');
      const base = await linkBase(ctx, opts.url);
      const { token, role } = await withStore(ctx, async (db) => {
        if (!(await new DynamoConfigStore(db).getAccount(account)))
          throw new Error(`account ${account} does not exist (footfall accounts add ${account})`);
        const store = new DynamoUserStore(db);
        const role: Role = asked ?? ((await store.members(account)).length === 0 ? 'owner' : 'member');
        const user = await store.add(address, account, new Date(), role).catch((e: unknown) => {
          throw e instanceof ConflictError
            ? new Error(`${address} already has a user; footfall users link ${address} makes a new set-password link`)
            : e;
        });
        return { token: await createInvite({ users: store, clock: Date.now }, user), role };
      });
      const link = `${base}${invitePath(token)}`;
      if (ctx.json) ctx.printJson({ email: address, account, role, link, expires_in_days: days });
      else
        ctx.print(
          `${link}\n(user ${address} added to account ${account} as ${role}; open the link within ${days} days to set a password; it works once)`,
        );
    });
  users
    .command('role <email>')
    .description("set a user's role in their account; the account's last owner stays an owner")
    .requiredOption('--role <role>', roleHelp)
    .action(async (email: string, opts: { role: string }, command: Command) => {
      const ctx = contextOf(command);
      const address = parseArgs(emailSchema, email, '<email>');
      const role = parseArgs(roleSchema, opts.role, '--role');
      const member = await withStore(ctx, async (db) => {
        const store = new DynamoUserStore(db);
        const user = await store.get(address);
        if (!user) throw new Error(`no user ${address}`);
        return setUserRole({ users: store, clock: Date.now }, user.account, null, address, role);
      });
      if (ctx.json) ctx.printJson(member);
      else ctx.print(`${member.email} is now ${member.role} of their account`);
    });
  users
    .command('link <email>')
    .description('print a new one-time set-password link for a user (a forgotten password)')
    .option('--url <base>', "the app's address for the link (default: the running local server)")
    .action(async (email: string, opts: { url?: string }, command: Command) => {
      const ctx = contextOf(command);
      const address = parseArgs(emailSchema, email, '<email>');
      const base = await linkBase(ctx, opts.url);
      const token = await withStore(ctx, async (db) => {
        const store = new DynamoUserStore(db);
        const user = await store.get(address);
        if (!user) throw new Error(`no user ${address}`);
        return createInvite({ users: store, clock: Date.now }, user);
      });
      const link = `${base}${invitePath(token)}`;
      if (ctx.json) ctx.printJson({ email: address, link, expires_in_days: days });
      else
        ctx.print(
          `${link}\n(a one-time link for ${address}, valid ${days} days; setting a password signs out their other sessions)`,
        );
    });
  users
    .command('list')
    .description('list the users of an account')
    .requiredOption('--account <id>', 'the account')
    .action(async (opts: { account: string }, command: Command) => {
      const ctx = contextOf(command);
      const account = parseArgs(accountIdSchema, opts.account, '--account');
      const list = await withStore(ctx, (db) => new DynamoUserStore(db).members(account));
      if (ctx.json) ctx.printJson(list);
      else
        ctx.print(
          formatTable(
            list.map((m) => ({ ...m })),
            ['email', 'role', 'status', 'created'],
          ),
        );
    });
}
