// Help texts: one overview and one per verb, each with an example.
import pkg from '../../package.json'

export const version = pkg.version

export const overview = `svc ${version} — an LLM routing gateway in one executable

Usage: svc <command> [options]

Gateway
  serve                 run the gateway (creates a first account on an empty database)
  init [FILE]           write a commented example svc.toml

Administration (open the database directly; safe beside a running gateway)
  accounts create NAME | list
  keys create --account NAME [--name LABEL] | list [--account NAME] | revoke ID
  grants add --account NAME --usd AMOUNT [scopes…] | list --account NAME
  provider-keys add --account NAME --provider ID < KEY | list | remove
  usage --account NAME

Every command takes --config FILE (else $SVC_CONFIG, else ./svc.toml), --db PATH, --json, --help.

  svc help COMMAND      help for one command
  svc --version
`

export const commandHelp: Record<string, string> = {
  serve: `svc serve [--config FILE] [--db PATH] [--host HOST] [--port N] [--log-level debug|info|warn|error] [--once]

Runs the gateway. On an empty database it creates the account "default" with an API key (written
to first-api-key beside the database, mode 0600) and the configured starter grant.
SIGTERM or SIGINT: stop accepting, let in-flight streams finish (shutdown_grace_seconds), exit 0.
--once starts, prints the address as JSON and exits (used by \`make build\` to prove the binary).

Example:
  ANTHROPIC_API_KEY=sk-ant-… svc serve --port 8080`,
  init: `svc init [FILE] [--force]

Writes a commented example configuration (default ./svc.toml).

Example:
  svc init && $EDITOR svc.toml`,
  accounts: `svc accounts create NAME | svc accounts list

Accounts made here start with no credit: add a grant.

Example:
  svc accounts create alice`,
  keys: `svc keys create --account NAME [--name LABEL] | svc keys list [--account NAME] | svc keys revoke ID

The key is printed once, at creation; only its SHA-256 hash is stored. A revoked key stops working
at once, also on a running gateway.

Example:
  svc keys create --account alice --name laptop`,
  grants: `svc grants add --account NAME --usd AMOUNT [--routing-mode pro|max|ultra_saver]… [--model ID]…
                 [--provider ID]… [--cost-type all|model_usage|byok_fee] [--expires RFC3339] [--source TEXT]
svc grants list --account NAME

Scopes narrow what a grant pays for; repeated flags add values. Charging order: grants whose scope
matches first, then the soonest expiry, then the oldest.

Example:
  svc grants add --account alice --usd 20 --routing-mode ultra_saver --expires 2027-01-01T00:00:00Z`,
  'provider-keys': `svc provider-keys add --account NAME --provider ID < KEY
svc provider-keys list [--account NAME]
svc provider-keys remove --account NAME --provider ID

Stores an account's own provider key (BYOK), encrypted with the master key ($SVC_MASTER_KEY).
The key is read from standard input so it never shows in \`ps\` or shell history.

Example:
  printenv MY_ANTHROPIC_KEY | svc provider-keys add --account alice --provider anthropic`,
  usage: `svc usage --account NAME [--limit N]

Credit position and the most recent usage events of an account.

Example:
  svc usage --account alice --json`,
}
