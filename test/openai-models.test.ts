// GET /v1/models on the OpenAI-shaped prefixes, as the `openai` SDK's models.list() and
// models.retrieve() (and Codex) call it: the routing profiles in OpenAI's model shape, errors in
// OpenAI's error shape.
import { describe, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { createHarness, sdkClients } from './support/harness'
import { simGpt, simProviders } from './support/sim-models'

const profiles = ['svc-pro', 'svc-max', 'svc-ultra-saver']
/** 2026-11-01T00:00:00Z, when the profiles were introduced (the Anthropic list's created_at). */
const created = 1_793_491_200

/** The harness configures no models: no profile has a window or an output limit to tell. */
const modelObject = (id: string) => ({
  id,
  object: 'model' as const,
  created,
  owned_by: 'svc',
  context_window: null,
  max_output_tokens: null,
})

describe('openai surface: models', () => {
  test('models.list() names the routing profiles, under /compat-b and /openai alike', async () => {
    const h = await createHarness()
    const listed = []
    for await (const model of sdkClients(h).openai.models.list()) listed.push(model)
    expect(listed).toEqual(profiles.map(modelObject))

    for (const prefix of ['/compat-b', '/openai']) {
      const res = await h.call(`${prefix}/v1/models`)
      expect(res.status).toBe(200)
      expect(await res.json()).toEqual({ object: 'list', data: profiles.map(modelObject) })
    }
  })

  test('models.retrieve() returns one profile', async () => {
    const h = await createHarness()
    expect(await sdkClients(h).openai.models.retrieve('svc-ultra-saver')).toEqual(modelObject('svc-ultra-saver'))
    expect(await (await h.call('/openai/v1/models/svc-max')).json()).toEqual(modelObject('svc-max'))
  })

  test('a profile’s object tells its largest context window and output, for an agent to compact in time', async () => {
    const h = await createHarness({
      env: { SIM_KEY: 'k' },
      config: {
        catalog: { builtin: false },
        providers: simProviders('http://127.0.0.1:9'),
        models: [
          simGpt({ context_window: 400_000, max_output_tokens: 128_000 }),
          simGpt({ id: 'gpt-small', provider: 'resp', context_window: 128_000, max_output_tokens: 16_000 }),
        ],
      },
    })
    expect(await sdkClients(h).openai.models.retrieve('svc-pro')).toMatchObject({
      id: 'svc-pro',
      context_window: 400_000,
      max_output_tokens: 128_000,
    })
  })

  test('a model below the profile’s quality floor, which routing never serves there, counts toward no window', async () => {
    const h = await createHarness({
      env: { SIM_KEY: 'k' },
      config: {
        catalog: { builtin: false },
        providers: simProviders('http://127.0.0.1:9'),
        // ultra_saver's floor is 60 by default; pro's 0, raised to 70 here.
        profiles: { pro: { quality_floor: 70 } },
        models: [
          simGpt({
            profiles: ['pro', 'max', 'ultra_saver'],
            quality: 90,
            context_window: 200_000,
            max_output_tokens: 64_000,
          }),
          simGpt({
            id: 'gpt-wide-weak',
            profiles: ['pro', 'max', 'ultra_saver'],
            quality: 50,
            context_window: 1_000_000,
            max_output_tokens: 128_000,
          }),
        ],
      },
    })
    const openai = await (await h.call('/compat-b/v1/models')).json()
    const anthropic = await (
      await h.call('/compat-a/v1/models', { headers: { 'anthropic-version': '2023-06-01' } })
    ).json()
    const limitsOf = (data: Record<string, unknown>[], window: string, output: string) =>
      Object.fromEntries(data.map((m) => [m.id, [m[window], m[output]]]))
    const expected = {
      'svc-pro': [200_000, 64_000],
      'svc-max': [1_000_000, 128_000],
      'svc-ultra-saver': [200_000, 64_000],
    }
    expect(limitsOf(openai.data, 'context_window', 'max_output_tokens')).toEqual(expected)
    expect(limitsOf(anthropic.data, 'max_input_tokens', 'max_tokens')).toEqual(expected)
  })

  test('a provider only an account’s own key reaches counts toward the window once the account has one', async () => {
    const h = await createHarness({
      env: { SIM_KEY: 'k' },
      config: {
        catalog: { builtin: false },
        providers: {
          ...simProviders('http://127.0.0.1:9'),
          own: { kind: 'openai-chat', base_url: 'http://127.0.0.1:9/v1', api_key_env: 'UNSET_PLATFORM_KEY' },
        },
        models: [
          simGpt({ context_window: 128_000, max_output_tokens: 16_000 }),
          simGpt({ id: 'gpt-own', provider: 'own', context_window: 1_000_000, max_output_tokens: 64_000 }),
        ],
      },
    })
    const limits = async () => {
      // OpenAI's model type has no limits; svc's objects carry them (the test above).
      const openai = (await sdkClients(h).openai.models.retrieve('svc-pro')) as unknown as Record<string, unknown>
      const anthropic = await (await h.call('/compat-a/v1/models/svc-pro')).json()
      return [openai.context_window, openai.max_output_tokens, anthropic.max_input_tokens, anthropic.max_tokens]
    }
    // Without a key of its own the account is never routed to gpt-own: an agent told its window
    // would be refused before it compacted.
    expect(await limits()).toEqual([128_000, 16_000, 128_000, 16_000])

    const added = await h.call('/v1/admin/provider-keys', {
      method: 'POST',
      headers: { authorization: 'Bearer admin-secret' },
      key: null,
      json: { account: 'default', provider: 'own', key: 'sk-own-account-key' },
    })
    expect(added.status).toBe(201)
    expect(await limits()).toEqual([1_000_000, 64_000, 1_000_000, 64_000])
  })

  test('an unknown id is a 404 in OpenAI’s error shape, naming the profiles', async () => {
    const h = await createHarness()
    const error = await sdkClients(h)
      .openai.models.retrieve('gpt-4o')
      .catch((err: unknown) => err)
    expect(error).toBeInstanceOf(OpenAI.NotFoundError)

    const res = await h.call('/compat-b/v1/models/gpt-4o')
    expect(res.status).toBe(404)
    expect(await res.json()).toEqual({
      error: {
        message: 'no model gpt-4o: the models are svc-pro, svc-max, svc-ultra-saver',
        type: 'invalid_request_error',
        param: null,
        code: null,
      },
    })
  })

  test('a Bearer key is required, as on the responses route; x-api-key is not one', async () => {
    const h = await createHarness()
    const missing = await h.call('/compat-b/v1/models', { key: null })
    expect(missing.status).toBe(401)
    expect(await missing.json()).toMatchObject({ error: { type: 'invalid_request_error', code: 'invalid_api_key' } })
    const viaHeader = await h.call('/openai/v1/models/svc-pro', { key: null, headers: { 'x-api-key': h.key } })
    expect(viaHeader.status).toBe(401)
  })

  test('another method is a 405 that names GET, in OpenAI’s shape', async () => {
    const h = await createHarness()
    const res = await h.call('/compat-b/v1/models', { method: 'POST', json: {} })
    expect(res.status).toBe(405)
    expect(res.headers.get('allow')).toBe('GET')
    expect(await res.json()).toMatchObject({ error: { type: 'invalid_request_error', code: 'method_not_allowed' } })
  })
})
