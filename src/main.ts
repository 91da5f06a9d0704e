#!/usr/bin/env bun
// Entry of the binary: argv → one command in src/cli.
import { runAccounts, runGrants, runKeys, runProviderKeys, runUsage } from './cli/admin'
import { runClaude, runCodex } from './cli/agents'
import { runBackup, runRestore } from './cli/backup'
import { type Io, processIo, reportFailure, UsageError } from './cli/context'
import { commandHelp, overview, runHelp, version } from './cli/help'
import { runInit } from './cli/init'
import { reexecWithServingHeap } from './cli/jsc-heap'
import { runServe } from './cli/serve'
import { runLogin, runLogout, runWhoami } from './cli/sign-in'
import { runSystemdUnit } from './cli/systemd'
import { ownEntry } from './lib/own-entry'

const commands: Record<string, (args: string[], io: Io) => Promise<number>> = {
  serve: runServe,
  init: runInit,
  accounts: runAccounts,
  keys: runKeys,
  grants: runGrants,
  usage: runUsage,
  backup: runBackup,
  restore: runRestore,
  'provider-keys': runProviderKeys,
  login: runLogin,
  logout: runLogout,
  whoami: runWhoami,
  claude: runClaude,
  codex: runCodex,
  'systemd-unit': runSystemdUnit,
}

export async function main(argv: string[], io: Io = processIo()): Promise<number> {
  const [command, ...rest] = argv
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    return runHelp(rest, io)
  }
  if (command === '--version' || command === 'version') {
    io.out(`svc ${version}`)
    return 0
  }
  const run = ownEntry(commands, command)
  try {
    if (!run) throw new UsageError(`unknown command ${JSON.stringify(command)}`)
    // The agents' own flags (`svc claude --help`) belong to the agent; our help is `svc help claude`.
    const passesThrough = command === 'claude' || command === 'codex'
    if (!passesThrough && (rest.includes('--help') || rest.includes('-h'))) {
      io.out(ownEntry(commandHelp, command) ?? overview)
      return 0
    }
    return await run(rest, io)
  } catch (err) {
    return reportFailure(io, err)
  }
}

if (import.meta.main) {
  if (process.argv[2] === 'serve') reexecWithServingHeap()
  process.exitCode = await main(process.argv.slice(2))
}
