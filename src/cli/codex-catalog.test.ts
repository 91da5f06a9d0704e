import { afterAll, describe, expect, test } from 'bun:test'
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  catalogPath,
  compactionLimit,
  codexCatalogFor,
  deriveEntry,
  pickBaseEntry,
  readCodexCatalog,
  writeCatalog,
} from './codex-catalog'

const dir = mkdtempSync(join(tmpdir(), 'svc-codex-catalog-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** A model as Codex's catalog has one; `over` replaces or adds fields. */
const model = (slug: string, over: Record<string, unknown> = {}) => ({
  slug,
  display_name: slug.toUpperCase(),
  description: `OpenAI's ${slug}`,
  visibility: 'list',
  priority: 5,
  use_responses_lite: false,
  base_instructions: `Prompt of ${slug}.`,
  shell_type: 'unified_exec',
  apply_patch_tool_type: 'freeform',
  support_verbosity: true,
  context_window: 272_000,
  max_context_window: 872_000,
  supports_search_tool: true,
  service_tiers: [{ id: 'priority', name: 'Fast' }],
  additional_speed_tiers: ['fast'],
  upgrade: { model: 'newer', migration_markdown: 'Meet newer' },
  availability_nux: { message: 'Try it' },
  default_reasoning_summary: 'none',
  ...over,
})

/** An executable shell script in the test's directory. */
function script(name: string, body: string): string {
  const path = join(dir, name)
  writeFileSync(path, `#!/bin/sh\n${body}\n`)
  chmodSync(path, 0o755)
  return path
}

/** A fake Codex that prints `catalog` for any arguments. */
const printing = (name: string, catalog: unknown) => script(name, `cat <<'EOF'\n${JSON.stringify(catalog)}\nEOF`)

const env = { PATH: '/usr/bin:/bin' }

describe('pickBaseEntry', () => {
  test('a listed model that speaks the full Responses API first, then the lowest priority', () => {
    const catalog = {
      models: [
        model('lite-first', { use_responses_lite: true, priority: 1 }),
        model('hidden', { visibility: 'hide', priority: 0 }),
        model('full-later', { priority: 13 }),
        model('full-sooner', { priority: 9 }),
        model('no-prompt', { priority: 2, base_instructions: undefined }),
      ],
    }
    expect(pickBaseEntry(catalog)?.slug).toBe('full-sooner')
  })

  test('lite models only: the lowest priority of them; a prompt template stands for the prompt', () => {
    const catalog = {
      models: [
        model('a', { use_responses_lite: true, priority: 4 }),
        model('b', {
          use_responses_lite: true,
          priority: 3,
          base_instructions: undefined,
          model_messages: { instructions_template: 'Template.' },
        }),
      ],
    }
    expect(pickBaseEntry(catalog)?.slug).toBe('b')
  })

  test('nothing usable: undefined', () => {
    expect(pickBaseEntry(undefined)).toBeUndefined()
    expect(pickBaseEntry({ models: 'x' })).toBeUndefined()
    expect(pickBaseEntry({ models: [] })).toBeUndefined()
    expect(
      pickBaseEntry({ models: [model('h', { visibility: 'hide' }), model('e', { base_instructions: '' })] }),
    ).toBeUndefined()
  })
})

describe('deriveEntry', () => {
  test("the base under the profile's name, OpenAI's own service off, the profile's window", () => {
    const base = { ...model('gpt-x'), auto_compact_token_limit: 250_000, default_service_tier: 'priority' }
    const entry = deriveEntry(base, 'svc-pro', 150_000)
    expect(entry).toEqual({
      ...base,
      slug: 'svc-pro',
      display_name: 'svc-pro',
      description: 'svc routing profile svc-pro: the gateway picks a model for each request',
      prefer_websockets: false,
      use_responses_lite: false,
      supports_search_tool: false,
      service_tiers: [],
      additional_speed_tiers: [],
      default_service_tier: null,
      default_reasoning_summary: 'auto',
      upgrade: null,
      availability_nux: null,
      context_window: 150_000,
      max_context_window: 150_000,
      // The window less an answer's 8,192 tokens and 5 %: under Codex's own 90 %.
      auto_compact_token_limit: 150_000 - 8_192 - 7_500,
    })
    // Codex's prompt and the rest travel as the base had them; the base is left as it was.
    expect(entry.base_instructions).toBe('Prompt of gpt-x.')
    expect(base.slug).toBe('gpt-x')
  })

  // svc gives a request without an output limit (Codex's) 8,192 tokens of room beside its prompt:
  // on a 40K window it refused a prompt past ~31.8K, while Codex waited for 90 % (36K) to compact.
  test('compaction comes before svc would turn the prompt away: under the window less an answer’s room and 5 %', () => {
    expect(compactionLimit(40_000)).toBe(40_000 - 8_192 - 2_000)
    expect(compactionLimit(32_768)).toBe(32_768 - 8_192 - 1_639)
    expect(compactionLimit(272_000)).toBe(244_800)
    // A window too small to leave a useful share: Codex's own default.
    expect(compactionLimit(9_000)).toBe(undefined)
    const small = deriveEntry({ ...model('gpt-x'), auto_compact_token_limit: 250_000 }, 'svc-pro', 40_000)
    expect(small.auto_compact_token_limit).toBe(29_808)
  })

  test("no window known: the base's stands; a field the base lacks is not added", () => {
    const { max_context_window: _, ...base } = model('gpt-x')
    const entry = deriveEntry(base, 'svc-max', undefined)
    expect(entry.context_window).toBe(272_000)
    expect('max_context_window' in entry).toBe(false)
    expect('default_service_tier' in entry).toBe(false)
  })
})

describe('readCodexCatalog', () => {
  test('runs `debug models --bundled` and reads its standard output as JSON', async () => {
    const bin = script(
      'prints.sh',
      `[ "$*" = "debug models --bundled" ] || exit 9\necho '{"models":[{"slug":"m"}]}'\necho noise >&2`,
    )
    expect(await readCodexCatalog(bin, env)).toEqual({ models: [{ slug: 'm' }] })
  })

  test('a failure, output that is not JSON, a missing binary: undefined', async () => {
    expect(await readCodexCatalog(script('fails.sh', `echo '{"models":[]}'\nexit 2`), env)).toBeUndefined()
    expect(await readCodexCatalog(script('garbage.sh', 'echo "error: unrecognized subcommand"'), env)).toBeUndefined()
    expect(await readCodexCatalog(join(dir, 'no-such-codex'), env)).toBeUndefined()
  })

  test('one that outlives the limit: undefined at the limit', async () => {
    const started = performance.now()
    expect(await readCodexCatalog(script('hangs.sh', 'exec sleep 30'), env, 200)).toBeUndefined()
    expect(performance.now() - started).toBeLessThan(5000)
  })
})

describe('writeCatalog and codexCatalogFor', () => {
  test('the file holds the one entry, readable by the user alone, and is replaced whole', () => {
    const path = catalogPath({ XDG_CONFIG_HOME: join(dir, 'config') }, 'svc-pro')
    expect(path).toBe(join(dir, 'config', 'svc', 'codex', 'svc-pro.models.json'))
    writeCatalog(path, { slug: 'first' })
    writeCatalog(path, { slug: 'svc-pro' })
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({ models: [{ slug: 'svc-pro' }] })
    expect(statSync(path).mode & 0o777).toBe(0o600)
    expect(readdirSync(join(dir, 'config', 'svc', 'codex'))).toEqual(['svc-pro.models.json'])
  })

  test("derives from the installed Codex's catalog, or says why not", async () => {
    const path = join(dir, 'derived', 'svc-pro.models.json')
    const bin = printing('catalog.sh', { models: [model('gpt-x')] })
    expect(await codexCatalogFor({ bin, env, profile: 'svc-pro', contextWindow: 100_000, path })).toEqual({ path })
    const [entry] = JSON.parse(readFileSync(path, 'utf8')).models
    expect(entry).toMatchObject({ slug: 'svc-pro', context_window: 100_000, base_instructions: 'Prompt of gpt-x.' })

    const hidden = printing('hidden.sh', { models: [model('h', { visibility: 'hide' })] })
    expect(await codexCatalogFor({ bin: hidden, env, profile: 'svc-pro', contextWindow: undefined, path })).toEqual({
      skipped: "Codex's catalog lists no model to derive the profile's from",
    })
    const old = script('old.sh', 'exit 2')
    expect(await codexCatalogFor({ bin: old, env, profile: 'svc-pro', contextWindow: undefined, path })).toEqual({
      skipped: `\`${old} debug models --bundled\` gave no catalog`,
    })
    // A file where its directory would go: nothing written, and said why.
    const blocked = join(dir, 'blocked')
    writeFileSync(blocked, '')
    const result = await codexCatalogFor({
      bin,
      env,
      profile: 'svc-pro',
      contextWindow: undefined,
      path: join(blocked, 'x.json'),
    })
    expect(result).toEqual({ skipped: expect.stringContaining(`cannot write ${join(blocked, 'x.json')}`) })
  })
})
