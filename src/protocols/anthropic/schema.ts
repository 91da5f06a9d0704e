// Route validation for Anthropic bodies: only what every request needs; the decoder checks the rest.

import { type Static, Type } from '@sinclair/typebox'

const Message = Type.Object({}, { additionalProperties: true })

export const AnthropicMessagesBody = Type.Object(
  {
    model: Type.String(),
    max_tokens: Type.Integer({ minimum: 1 }),
    messages: Type.Array(Message, { minItems: 1 }),
    stream: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: true },
)
export type AnthropicMessagesBody = Static<typeof AnthropicMessagesBody>

export const AnthropicCountTokensBody = Type.Object(
  {
    model: Type.String(),
    messages: Type.Array(Message, { minItems: 1 }),
    system: Type.Optional(Type.Union([Type.String(), Type.Array(Type.Object({}, { additionalProperties: true }))])),
    tools: Type.Optional(Type.Array(Type.Object({}, { additionalProperties: true }))),
  },
  { additionalProperties: true },
)
export type AnthropicCountTokensBody = Static<typeof AnthropicCountTokensBody>
