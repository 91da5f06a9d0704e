// A 200 JSON answer that is not an answer of the upstream's kind (a proxy's `{"status":"ok"}`, or an
// Anthropic error object under a 200), on every route: a failed attempt like a 5xx, whether relayed
// or translated. The next candidate serves, the broken leg is charged nothing, the model's health
// counts it; with no candidate left the client hears the upstream's error in its surface's shape.
import { describe, expect, test } from 'bun:test'
import type { ProviderKind } from '../../src/config/schema'
import { scriptedPair, scriptedUpstream } from '../support/scripted-upstream'
import { requestDetail } from './helpers'
import { bodyFor, type Route, routes, send } from './routes'

/** The routes' four, and an Anthropic client's request translated for a Responses upstream. */
const cases: Route[] = [
  ...routes,
  { ...routes[1]!, name: 'messages → openai-responses (translated)', kind: 'openai-responses' },
]

/** The second model's answer in each kind's own shape: 10 tokens in, 2 out, at 1 USD/Mtok each. */
const answers: Record<ProviderKind, unknown> = {
  anthropic: {
    id: 'msg_up',
    type: 'message',
    role: 'assistant',
    model: 'second-up',
    content: [{ type: 'text', text: 'Backup here.' }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 2 },
  },
  'openai-chat': {
    id: 'chatcmpl-up',
    object: 'chat.completion',
    created: 1,
    model: 'second-up',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Backup here.' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 },
  },
  'openai-responses': {
    id: 'resp_up',
    object: 'response',
    created_at: 1,
    model: 'second-up',
    status: 'completed',
    output: [
      {
        id: 'msg_up',
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: 'Backup here.', annotations: [] }],
      },
    ],
    usage: { input_tokens: 10, output_tokens: 2, total_tokens: 12 },
  },
}
const BACKUP_COST = 12 * 1000

const passesThrough = (route: Route) => route.kind === (route.surface === 'messages' ? 'anthropic' : 'openai-responses')

/** What the client hears of an upstream's failure: its status and error body, by surface. */
interface Heard {
  status: number
  anthropicType: string
  openai: { type: string; code: string }
  kind: string
}
const apiError = (status: number): Heard => ({
  status,
  anthropicType: 'api_error',
  openai: { type: 'server_error', code: 'server_error' },
  kind: 'api_error',
})
const overloaded: Heard = {
  status: 529,
  anthropicType: 'overloaded_error',
  openai: { type: 'server_error', code: 'server_overloaded' },
  kind: 'overloaded',
}

interface NotAnAnswer {
  name: string
  body: unknown
  /** The failed leg's error, and what a client hears of it when no candidate is left. */
  failure: (route: Route) => { message: string; heard: Heard }
}

const notAnswers: NotAnAnswer[] = [
  {
    name: 'a proxy’s {"status":"ok"}',
    body: { status: 'ok', result: null },
    failure: (route) => ({
      heard: apiError(502),
      message: passesThrough(route)
        ? `upstream answered 200 with a body that is not a ${route.surface === 'messages' ? 'message' : 'response'}`
        : {
            anthropic: 'upstream returned a message without a content array',
            'openai-chat': 'upstream returned a chat completion without choices[0].message',
            'openai-responses': 'upstream Responses body is not a response object',
          }[route.kind],
    }),
  },
  {
    // Anthropic's own error type is kept (an overloaded model cools like a 529); the OpenAI kinds
    // read it as their own dialect's error object, a 500.
    name: 'an Anthropic error object',
    body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
    failure: (route) => ({ message: 'Overloaded', heard: route.kind === 'anthropic' ? overloaded : apiError(500) }),
  },
]

const gateway = (route: Route) =>
  scriptedPair(route.kind, {}, 5, route.kind === 'openai-responses' ? { openai_itself: true } : undefined)
/** The route's non-streaming request for svc-pro, scriptedPair's profile. */
const request = (route: Route) => ({ ...bodyFor(route, false), model: 'svc-pro' })

const rows = cases.flatMap((route) =>
  notAnswers.map((bad) => ({ route, bad, label: `${route.name}, ${bad.name} under 200` })),
)

describe('a 200 JSON body that is not an answer', () => {
  test.each(rows)('$label: the second model serves, the broken leg free', async ({ route, bad }) => {
    const h = await gateway(route)
    scriptedUpstream(h, (body) => ({ json: body.model === 'first-up' ? bad.body : answers[route.kind] }))
    const res = await send(h, route, request(route))
    expect(res.status).toBe(200)
    const requestId = res.headers.get('x-request-id')!
    if (route.surface === 'messages') {
      expect(await res.json()).toMatchObject({
        type: 'message',
        content: [{ type: 'text', text: 'Backup here.' }],
        usage: { input_tokens: 10, output_tokens: 2 },
      })
    } else {
      expect(await res.json()).toMatchObject({
        object: 'response',
        status: 'completed',
        output: [{ type: 'message', content: [{ type: 'output_text', text: 'Backup here.' }] }],
        usage: { input_tokens: 10, output_tokens: 2 },
      })
    }
    const detail = await requestDetail(h, requestId)
    expect(detail).toMatchObject({
      status: 'completed',
      http_status: 200,
      attempts: 2,
      selected_model_id: 'second',
      total_cost_nanos: BACKUP_COST,
      charged_nanos: BACKUP_COST,
      error: null,
    })
    expect(detail.provider_ranks.map((r: { model_id: string; status: string }) => [r.model_id, r.status])).toEqual([
      ['first', 'failed'],
      ['second', 'chosen'],
    ])
    const leg = (e: Record<string, unknown>) => [
      e.model_id,
      e.outcome,
      e.estimated,
      e.error,
      e.input_tokens,
      e.output_tokens,
      e.cost_nanos,
      e.charged_nanos,
    ]
    expect(detail.usage_events.map(leg)).toEqual([
      ['first', 'failed', false, bad.failure(route).message, 0, 0, 0, 0],
      ['second', 'ok', false, null, 10, 2, BACKUP_COST, BACKUP_COST],
    ])
    expect(detail.grant_charges).toEqual([
      expect.objectContaining({ usage_event_id: detail.usage_events[1].id, amount_nanos: BACKUP_COST }),
    ])
  })

  test.each(rows)(
    '$label, from every candidate: the upstream’s error in the surface’s shape, nothing charged',
    async ({ route, bad }) => {
      const h = await gateway(route)
      scriptedUpstream(h, () => ({ json: bad.body }))
      const res = await send(h, route, request(route))
      const { message, heard } = bad.failure(route)
      // OpenAI clients do not know 529; they retry 503.
      const status = route.surface === 'responses' && heard.status === 529 ? 503 : heard.status
      expect(res.status).toBe(status)
      expect(res.headers.get('x-should-retry')).toBeNull()
      if (route.surface === 'messages') {
        expect(await res.json()).toEqual({ type: 'error', error: { type: heard.anthropicType, message } })
      } else {
        expect(await res.json()).toEqual({
          error: { message, type: heard.openai.type, param: null, code: heard.openai.code },
        })
      }
      const detail = await requestDetail(h, res.headers.get('x-request-id')!)
      expect(detail).toMatchObject({
        status: 'failed',
        http_status: status,
        attempts: 2,
        selected_model_id: null,
        total_cost_nanos: 0,
        charged_nanos: 0,
        error: { type: heard.kind, message },
      })
      expect(
        detail.usage_events.map((e: Record<string, unknown>) => [e.model_id, e.outcome, e.error, e.cost_nanos]),
      ).toEqual([
        ['first', 'failed', message, 0],
        ['second', 'failed', message, 0],
      ])
      expect(detail.grant_charges).toEqual([])
    },
  )
})

describe('the model’s health counts it', () => {
  test.each(cases)(
    '$name: three open the circuit, the fourth request goes to the second model first',
    async (route) => {
      const h = await gateway(route)
      scriptedUpstream(h, (body) => ({ json: body.model === 'first-up' ? { status: 'ok' } : answers[route.kind] }))
      const served = async () => {
        const res = await send(h, route, request(route))
        expect(res.status).toBe(200)
        return requestDetail(h, res.headers.get('x-request-id')!)
      }
      for (let i = 0; i < 3; i++) expect(await served()).toMatchObject({ attempts: 2, selected_model_id: 'second' })
      const fourth = await served()
      expect(fourth).toMatchObject({ attempts: 1, selected_model_id: 'second', charged_nanos: BACKUP_COST })
      expect(fourth.provider_ranks).toEqual([
        expect.objectContaining({ model_id: 'second', status: 'chosen' }),
        expect.objectContaining({
          model_id: 'first',
          status: 'not_tried',
          health: expect.objectContaining({ state: 'open' }),
        }),
      ])
    },
  )
})
