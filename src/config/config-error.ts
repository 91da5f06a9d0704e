// A setup svc cannot run with (its file, its environment, a database it cannot open): the CLI
// prints the message alone, without a stack, and exits 1 (cli/context.ts).
export class ConfigError extends Error {
  override name = 'ConfigError'
}
