// The admin command line, for people and scripts. It works on DATABASE_URL, or on the embedded database in DATA_DIR:
// directly when no server runs there, through the running server's socket when one does.
//
//   npm run admin -- create-user <username> [--name NAME] [--lang en|ja]
//   npm run admin -- create-token <username> [--scope read|write] [--expires-in DAYS] [--label TEXT]
//   npm run admin -- list-users
//   npm run admin -- revoke-token <token or token id>
//   npm run admin -- set-password <username>            (the password from standard input, or a prompt)
//   npm run admin -- create-client <name> --redirect-uri URI [--redirect-uri URI...] [--confidential|--public] [--first-party] [--proposals]
//   npm run admin -- list-clients
//   npm run admin -- delete-client <client id>
//   npm run admin -- reindex
//   npm run admin -- export <team>/<note> [--format full|markdown] > note.zip   (export-note.ts)
//   npm run admin -- import <team> [--as USERNAME] [--name NAME] < note.zip   (import-note.ts)
//
// reindex rebuilds the search index from the notes, pages, issues and comments (src/modules/search), in one
// transaction, and prints what it indexed, the time it took and the index's size.
// create-token prints the token alone on the last line of its output; one line on stderr says which database the
// command opened. On the embedded database it never creates one: a DATA_DIR with no database yet (a typo, or a
// different working directory) is an error, not a new empty database. Exit status: 0 done, 1 failed, 2 usage.
import { ConfigError, loadConfig } from '../config.ts';
import { describeDatabaseUrl, migrate, NoDatabaseError, openDatabase } from '../db/database.ts';
import { HttpError } from '../http/errors.ts';
import { DomainError } from '../modules/errors.ts';
import { Token } from '../modules/auth/token.entity.ts';
import { hashToken, issueToken, looksLikeToken } from '../modules/auth/tokens.ts';
import { passwordProblem, setPassword } from '../modules/auth/passwords.ts';
import { createClient, redirectUriProblem } from '../modules/oauth/clients.ts';
import { OAuthClient } from '../modules/oauth/oauth.entity.ts';
import { User } from '../modules/users/user.entity.ts';
import { readPassword } from './read-password.ts';
import { createUser, findUserByUsername } from '../modules/users/users.service.ts';
import { reindex } from '../modules/search/search.indexer.ts';
import { exportToStandardOutput } from './export-note.ts';
import { importFromStandardInput } from './import-note.ts';

const usage = `usage:
  npm run admin -- create-user <username> [--name NAME] [--lang en|ja]
  npm run admin -- create-token <username> [--scope read|write] [--expires-in DAYS] [--label TEXT]
  npm run admin -- list-users
  npm run admin -- revoke-token <token | token id>
  npm run admin -- set-password <username>   (reads the password from standard input, or asks for it)
  npm run admin -- create-client <name> --redirect-uri URI [--redirect-uri URI...] [--confidential|--public] [--first-party] [--proposals]
  npm run admin -- list-clients
  npm run admin -- delete-client <client id>
  npm run admin -- reindex
  npm run admin -- export <team>/<note> [--format full|markdown] > note.zip   (the note's export zip; progress on a terminal)
  npm run admin -- import <team> [--as USERNAME] [--name NAME] < note.zip   (a note's export zip; progress on a terminal)`;

class UsageError extends Error {}

type Parsed = { positional: string[]; flags: Map<string, string>; repeated: Map<string, string[]>; switches: Set<string> };

/** `allowed` take a value (a repeated one is kept in `repeated` too); `switchNames` take none. */
function parse(args: string[], allowed: string[], switchNames: string[] = []): Parsed {
  const positional: string[] = [];
  const flags = new Map<string, string>();
  const repeated = new Map<string, string[]>();
  const switches = new Set<string>();
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i]!;
    if (arg.startsWith('--')) {
      const [name, inline] = arg.slice(2).split('=', 2) as [string, string | undefined];
      if (switchNames.includes(name) && inline === undefined) {
        switches.add(name);
        continue;
      }
      if (!allowed.includes(name)) throw new UsageError(`unknown option --${name}`);
      const value = inline ?? args[++i];
      if (value === undefined) throw new UsageError(`--${name} needs a value`);
      flags.set(name, value);
      repeated.set(name, [...(repeated.get(name) ?? []), value]);
    } else {
      positional.push(arg);
    }
  }
  return { positional, flags, repeated, switches };
}

async function run(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === 'help' || command === '--help') {
    process.stdout.write(`${usage}\n`);
    return command ? 0 : 2;
  }
  const commands = ['create-user', 'create-token', 'list-users', 'revoke-token', 'set-password', 'create-client', 'list-clients', 'delete-client', 'reindex'];
  commands.push('import');
  commands.push('export');
  if (!commands.includes(command)) throw new UsageError(`unknown command "${command}"`);
  const config = loadConfig();
  if (config.databaseUrl) process.stderr.write(`admin: using PostgreSQL at ${describeDatabaseUrl(config.databaseUrl)}\n`);
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, shareRunningServer: true, mustExist: true });
  if (database.kind !== 'postgres') {
    const how = database.kind === 'embedded-shared' ? ", through the running server's socket" : '';
    process.stderr.write(`admin: using embedded database in ${config.dataDir}${how}\n`);
  }
  try {
    await migrate(database.orm);
    const em = database.orm.em.fork();
    switch (command) {
      case 'create-user': {
        const { positional, flags } = parse(rest, ['name', 'lang']);
        if (positional.length !== 1) throw new UsageError('create-user takes one username');
        const lang = flags.get('lang') ?? 'en';
        if (lang !== 'en' && lang !== 'ja') throw new UsageError('--lang is en or ja');
        const user = await createUser(em, { username: positional[0]!, name: flags.get('name'), lang });
        process.stdout.write(`created user ${user.username} (id ${user.id}) with default team ${user.username}\n`);
        return 0;
      }
      case 'create-token': {
        const { positional, flags } = parse(rest, ['scope', 'expires-in', 'label']);
        if (positional.length !== 1) throw new UsageError('create-token takes one username');
        const scope = flags.get('scope') ?? 'write';
        if (scope !== 'read' && scope !== 'write') throw new UsageError('--scope is read or write');
        const expiresIn = flags.get('expires-in');
        if (expiresIn !== undefined && !/^[1-9]\d{0,4}$/.test(expiresIn)) throw new UsageError('--expires-in is a number of days, 1 to 99999');
        const user = await findUserByUsername(em, positional[0]!);
        if (!user) throw new HttpError(404, 'not_found', `no user is named "${positional[0]}"`);
        const { token, secret } = await issueToken(em, user, {
          scope,
          expiresInDays: expiresIn === undefined ? undefined : Number(expiresIn),
          label: flags.get('label'),
        });
        const expiry = token.expiresAt ? `expires ${token.expiresAt.toISOString()}` : 'does not expire';
        process.stdout.write(`token ${token.id} for ${user.username}, scope ${scope}, ${expiry}:\n${secret}\n`);
        return 0;
      }
      case 'list-users': {
        parse(rest, []);
        const users = await em.find(User, {}, { orderBy: { id: 'asc' } });
        process.stdout.write('id\tusername\tname\tlang\n');
        for (const user of users) process.stdout.write(`${user.id}\t${user.username}\t${user.name}\t${user.lang}\n`);
        return 0;
      }
      case 'revoke-token': {
        const { positional } = parse(rest, []);
        if (positional.length !== 1) throw new UsageError('revoke-token takes a token or a token id');
        const reference = positional[0]!;
        const where = looksLikeToken(reference) ? { tokenHash: hashToken(reference) } : /^\d+$/.test(reference) ? { id: Number(reference) } : undefined;
        if (!where) throw new UsageError('revoke-token takes a token (nt_...) or a numeric token id');
        const deleted = await em.nativeDelete(Token, where);
        if (deleted === 0) throw new HttpError(404, 'not_found', 'no such token');
        process.stdout.write('token revoked\n');
        return 0;
      }
      case 'set-password': {
        const { positional } = parse(rest, []);
        if (positional.length !== 1) throw new UsageError('set-password takes one username');
        const user = await findUserByUsername(em, positional[0]!);
        if (!user) throw new HttpError(404, 'not_found', `no user is named "${positional[0]}"`);
        const password = await readPassword();
        if (password === undefined) throw new UsageError('the two passwords differ');
        const problem = passwordProblem(password);
        if (problem) throw new UsageError(problem);
        await setPassword(em, user, password);
        process.stdout.write(`password set for ${user.username}\n`);
        return 0;
      }
      case 'create-client': {
        const { positional, repeated, switches } = parse(rest, ['redirect-uri'], ['confidential', 'public', 'first-party', 'proposals']);
        if (positional.length !== 1) throw new UsageError('create-client takes one name (quote it if it has spaces)');
        const name = positional[0]!.trim();
        if (name === '' || name.length > 255) throw new UsageError('the name has 1 to 255 characters');
        if (switches.has('confidential') && switches.has('public')) throw new UsageError('a client is --confidential or --public, not both');
        const redirectUris = repeated.get('redirect-uri') ?? [];
        if (redirectUris.length === 0) throw new UsageError('create-client needs at least one --redirect-uri');
        for (const uri of redirectUris) {
          const problem = redirectUriProblem(uri);
          if (problem) throw new UsageError(problem);
        }
        const confidential = !switches.has('public');
        const { client, secret } = await createClient(em, {
          name, redirectUris, confidential, firstParty: switches.has('first-party'), writes: switches.has('proposals') ? 'proposals' : 'direct',
        });
        const kind = `${confidential ? 'confidential' : 'public'}${client.firstParty ? ', first-party' : ''}${client.writes === 'proposals' ? ', writes proposals' : ''}`;
        process.stdout.write(`created ${kind} client "${client.name}"\nclient_id: ${client.clientId}\n`);
        if (secret) process.stdout.write(`client_secret (shown once, keep it safe):\n${secret}\n`);
        return 0;
      }
      case 'list-clients': {
        parse(rest, []);
        const clients = await em.find(OAuthClient, {}, { orderBy: { id: 'asc' }, populate: ['owner'] });
        process.stdout.write('client_id\tname\tkind\twrites\towner\tredirect_uris\n');
        for (const client of clients) {
          const kind = `${client.confidential ? 'confidential' : 'public'}${client.firstParty ? ',first-party' : ''}`;
          process.stdout.write(`${client.clientId}\t${client.name}\t${kind}\t${client.writes}\t${client.owner?.username ?? '-'}\t${client.redirectUris.join(' ')}\n`);
        }
        return 0;
      }
      case 'delete-client': {
        const { positional } = parse(rest, []);
        if (positional.length !== 1) throw new UsageError('delete-client takes one client id');
        const client = await em.findOne(OAuthClient, { clientId: positional[0]! });
        if (!client) throw new HttpError(404, 'not_found', 'no such client');
        // its tokens go with it (on delete cascade); forget them in every server process through the change feed
        await em.nativeDelete(OAuthClient, { id: client.id });
        process.stdout.write('client deleted, with every token it held\n');
        return 0;
      }
      case 'reindex': {
        parse(rest, []);
        const report = await reindex(em);
        const [size] = await em.execute<{ table: string; indexes: string }[]>(
          `select pg_size_pretty(pg_table_size('search_documents')) as "table", pg_size_pretty(pg_indexes_size('search_documents')) as indexes`,
        );
        const { note, page, issue, comment } = report.documents;
        process.stdout.write(`reindexed ${note} notes, ${page} pages, ${issue} issues, ${comment} comments in ${(report.milliseconds / 1000).toFixed(1)} s; ` +
          `index table ${size!.table}, its indexes ${size!.indexes}\n`);
        return 0;
      }
      case 'import': {
        const { positional, flags } = parse(rest, ['as', 'name']);
        if (positional.length !== 1) throw new UsageError('import takes one team name (and the zip on standard input)');
        const outcome = await importFromStandardInput(em, config, positional[0]!, { as: flags.get('as'), name: flags.get('name') });
        if (!outcome.ok && outcome.usage) throw new UsageError(outcome.message);
        if (!outcome.ok) {
          process.stderr.write(`error: ${outcome.message}\n`);
          return 1;
        }
        process.stdout.write(`${outcome.line}\n`);
        return 0;
      }
      case 'export': {
        const { positional, flags } = parse(rest, ['format']);
        if (positional.length !== 1) throw new UsageError('export takes one <team>/<note> (and writes the zip to standard output)');
        const outcome = await exportToStandardOutput(em, config, positional[0]!, flags.get('format'));
        if (!outcome.ok && outcome.usage) throw new UsageError(outcome.message);
        if (!outcome.ok) {
          process.stderr.write(`error: ${outcome.message}\n`);
          return 1;
        }
        process.stderr.write(`${outcome.line}\n`); // standard output is the zip
        return 0;
      }
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } finally {
    await database.close();
  }
}

run(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof UsageError) {
      process.stderr.write(`${error.message}\n${usage}\n`);
      process.exit(2);
    }
    const message =
      error instanceof NoDatabaseError
        ? `${error.message}: start the server once with \`make run\` (it creates the database), or set DATA_DIR to the server's data directory, or DATABASE_URL`
        : error instanceof HttpError || error instanceof DomainError || error instanceof ConfigError ? error.message
        // A system or database error (ECONNREFUSED, a failed login, a missing database) is the message alone: it
        // is about the setup, not a bug whose stack would help.
        : error instanceof Error && typeof (error as { code?: unknown }).code === 'string' ? `the database: ${error.message}`
        : error instanceof Error ? error.stack ?? error.message
        : String(error);
    process.stderr.write(`error: ${message}\n`);
    process.exit(1);
  },
);
