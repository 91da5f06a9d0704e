// Help texts: one overview and one per verb, each with an example.
import pkg from '../../package.json'
import { ownEntry } from '../lib/own-entry'
import { type Io, reportFailure, UsageError } from './context'

export const version = pkg.version

export const overview = `svc ${version} — an LLM routing gateway in one executable

Usage: svc <command> [options]

Gateway
  serve                 run the gateway (creates a first account on an empty database)
  init [FILE]           write a commented example svc.toml
  systemd-unit          print a hardened systemd unit that runs svc serve

Signing in and coding agents
  login [URL]           sign this machine in to a gateway (device code in the browser)
  login --with-token    sign in with a key read from standard input
  logout | whoami
  claude [--profile P] [ARGS…]   run Claude Code through the gateway
  codex [--profile P] [ARGS…]    run the Codex CLI through the gateway
  (login, whoami, claude, codex: --insecure allows plain http:// to another machine)

Administration (open the database directly; safe beside a running gateway)
  accounts create NAME | list
  keys create --account NAME [--name LABEL] | list [--account NAME] | revoke ID
  grants add --account NAME --usd AMOUNT [scopes…] | list --account NAME
  provider-keys add --account NAME --provider ID < KEY | list | remove | reseal
  usage --account NAME
  backup FILE           a consistent copy of the database, taken while the gateway serves
  restore FILE          put a backup in the database's place (the gateway stopped)

Every command takes --config FILE (else $SVC_CONFIG, else ./svc.toml), --db PATH, --json (but
systemd-unit, whose output is the unit file), --help.

  svc help COMMAND      help for one command
  svc --version
`

export const commandHelp: Record<string, string> = {
  login: `svc login [URL] [--no-browser] [--name DEVICE] [--insecure]
svc login [URL] --with-token [--insecure] < KEY

Signs this machine in to a gateway (default: $SVC_URL, else the last one, else
http://127.0.0.1:8080). Prints a URL and a code and opens the browser where there is one; approve on
the gateway's /login page with a key you already hold (or the admin token). The CLI then receives
its own new API key, named after the device, stored with the URL in ~/.config/svc/credentials.json
(mode 0600). A sign-in file that cannot be read is replaced (and said so).

URL is the gateway's root, with its scheme (https://svc.example.com, or a reverse proxy's path
prefix: https://example.com/svc), not one of its routes (…/compat-a). Plain http:// is refused to
any host but this machine (localhost, 127.0.0.0/8, ::1, and the 0.0.0.0 or :: a server bound to
every interface logs): the key would travel in clear. --insecure allows it, where the network
between is yours alone.

Examples:
  svc login https://svc.example.com
  printenv SVC_KEY | svc login http://127.0.0.1:8080 --with-token`,
  logout: `svc logout

Forgets the stored key. A key the device sign-in made is revoked on its gateway first; a key given
with --with-token may serve other machines and scripts, so it keeps working there (the message says
how to revoke it).

Example:
  svc logout`,
  whoami: `svc whoami [--json] [--insecure]

Shows the signed-in account, gateway and remaining credit. Exits 1 when not signed in, when the
sign-in file cannot be read, or when the gateway refuses the key (run svc login again; or, for a key
from $SVC_API_KEY, set a valid one).
$SVC_URL and $SVC_API_KEY win over the sign-in; $SVC_URL alone is used with the stored key only
when it names the gateway signed in to. --insecure: a plain http:// $SVC_URL to another machine.

Example:
  svc whoami`,
  claude: `svc claude [--profile pro|max|ultra-saver] [--insecure] [ARGS…] [-- ARGS…]

Runs Claude Code with the gateway as its endpoint: ANTHROPIC_BASE_URL (the messages prefix),
ANTHROPIC_AUTH_TOKEN (your key), ANTHROPIC_MODEL (the profile), the small/fast model on
svc-ultra-saver, and session headers (x-session-source: claude-code, an agent id). All but the key
also go in --settings, so that no settings file (~/.claude/settings.json, a repository's
.claude/settings.json) sends your requests elsewhere; a --settings of your own is merged with it.
Arguments other than --profile and --insecure pass through to claude, and so does a -- after any of
them (a -- before them only ends svc's flags); its exit code does too. --insecure: a plain http://
$SVC_URL to another machine. Help for svc itself: svc help claude.

Examples:
  svc claude
  svc claude --profile max -p "explain this repository"`,
  codex: `svc codex [--profile pro|max|ultra-saver] [--insecure] [ARGS…] [-- ARGS…]

Runs the Codex CLI with the gateway as a custom provider on the responses route
(wire_api = "responses"), through -c overrides: your own Codex config file is not touched.
Arguments pass through as for svc claude.

Examples:
  svc codex
  svc codex exec "add a test for the parser"`,
  serve: `svc serve [--config FILE] [--db PATH] [--host HOST] [--port N] [--log-level debug|info|warn|error] [--once]

Runs the gateway. On an empty database it creates the account "default" with an API key (written
to first-api-key beside the database, or <name>-first-api-key beside a database not named svc.db;
mode 0600) and the configured starter grant.
SIGTERM, SIGINT or SIGHUP: stop accepting, let in-flight streams finish (shutdown_grace_seconds), exit 0.
--once starts, prints the address as JSON and exits (used by \`make build\` to prove the binary).

Example:
  ANTHROPIC_API_KEY=sk-ant-… svc serve --port 8080`,
  init: `svc init [FILE] [--force]

Writes a commented example configuration (default ./svc.toml).

Example:
  svc init && $EDITOR svc.toml`,
  'systemd-unit': `svc systemd-unit [--binary PATH] [--user NAME] [--port N] [--config FILE] [--db PATH]

Prints a systemd unit for \`svc serve\` to stdout. It runs as a throwaway DynamicUser (or --user
NAME, an account that must exist where the unit runs: warned of when this machine has none),
keeps the database in /var/lib/svc/svc.db (StateDirectory=svc; the first API key is written
beside it), reads /etc/svc/svc.toml and the secrets from /etc/svc/env
(provider keys, SVC_ADMIN_TOKEN, SVC_MASTER_KEY), restarts always (a SIGHUP's drain exits 0), gives in-flight streams
time to finish on stop, and locks the process down (no capabilities, read-only system, no home).
--binary defaults to this executable when it is the compiled svc, else /usr/local/bin/svc.
--config and --db change the paths written into the unit (not under /home, /root, /tmp or /var/tmp,
which the unit hides from the service; a database outside /var/lib needs --user); --port below 1024 adds
CAP_NET_BIND_SERVICE, the one capability it then needs.

Example:
  svc systemd-unit | sudo tee /etc/systemd/system/svc.service
  sudo systemctl daemon-reload && sudo systemctl enable --now svc`,
  accounts: `svc accounts create NAME | svc accounts list

Accounts made here start with no credit: add a grant.

Example:
  svc accounts create alice`,
  keys: `svc keys create --account NAME [--name LABEL] | svc keys list [--account NAME] | svc keys revoke ID

The key is printed once, at creation; only its SHA-256 hash is stored. A revoked key stops working
at once, also on a running gateway. LABEL: at most 100 characters, no tabs or line breaks.

Example:
  svc keys create --account alice --name laptop`,
  grants: `svc grants add --account NAME --usd AMOUNT [--routing-mode pro|max|ultra_saver]… [--model ID]…
                 [--provider ID]… [--cost-type all|model_usage|byok_fee] [--expires RFC3339] [--source TEXT]
svc grants list --account NAME

AMOUNT is plain decimal USD (20, 0.25), at most 9 decimals: the ledger counts whole nanos.
Scopes narrow what a grant pays for; repeated flags add values. Charging order: grants whose scope
matches first, then the soonest expiry, then the oldest.

Example:
  svc grants add --account alice --usd 20 --routing-mode ultra_saver --expires 2099-01-01T00:00:00Z`,
  'provider-keys': `svc provider-keys add --account NAME --provider ID < KEY
svc provider-keys list [--account NAME]
svc provider-keys remove --account NAME --provider ID
svc provider-keys reseal --old-master-key-env VAR

Stores an account's own provider key (BYOK), encrypted with the master key ($SVC_MASTER_KEY).
The key is read from standard input so it never shows in \`ps\` or shell history. \`list\` says
whether the master key opens each key (one it does not serves no one).

To rotate the master key: set $SVC_MASTER_KEY to the new key and VAR to the old one, run
\`reseal\` (every key the old one opens is sealed again under the new one, in one transaction),
then restart svc serve. It exits 1 if some key opens with neither.

Example:
  printenv MY_ANTHROPIC_KEY | svc provider-keys add --account alice --provider anthropic`,
  backup: `svc backup FILE

Copies the database to FILE (created readable by you alone; never over an existing file) as one
consistent snapshot, while the gateway goes on serving and writing. The copy is checked and
counted before the command succeeds. To restore it: stop svc, svc restore FILE, start svc.

Example:
  svc backup /var/backups/svc-$(date +%F).db`,
  restore: `svc restore FILE

Puts FILE, a backup svc backup made, in the database's place (--db, [server] database). The
gateway must be stopped: a database another process has open is refused. The database it replaces
is kept beside it as PATH.replaced-TIME, with what its log held; the backup arrives owned as the
database was (when run as root), readable by its owner alone, with no log
beside it (a -wal a crashed gateway left would otherwise be replayed onto it at the next start).
Requests the backup caught in its journal are recorded when svc next opens the database, charged once.

Example:
  sudo systemctl stop svc
  sudo svc restore /var/backups/svc-2026-11-20.db --db /var/lib/svc/svc.db
  sudo systemctl start svc`,
  usage: `svc usage --account NAME [--limit N]

Credit position and the most recent usage events of an account (--limit: 1–200, default 20).

Example:
  svc usage --account alice --json`,
}

/**
 * `svc help [COMMAND]`: the overview, or one command's help. A topic that is no command is a
 * mistake, said as `svc nosuch` says it (exit 2), not answered with the overview.
 */
export function runHelp(topics: string[], io: Io): number {
  const topic = topics[0]
  if (topic === undefined || topic === 'help') {
    io.out(overview)
    return 0
  }
  const help = ownEntry(commandHelp, topic)
  if (help === undefined) return reportFailure(io, new UsageError(`unknown command ${JSON.stringify(topic)}`))
  io.out(help)
  return 0
}
