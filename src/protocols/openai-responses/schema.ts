// The inbound Responses body as the gateway validates it (wire-formats §2.2). Only the fields the
// gateway reads are typed; everything else passes as additional properties.
import { type Static, Type } from '@sinclair/typebox'

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()])

export const ResponsesBody = Type.Object(
  {
    model: Type.String(),
    // Optional here: the decoder says why a body without it is refused (a stored prompt, a stored
    // conversation, or no input at all), where the schema could only say it is missing.
    input: Type.Optional(Type.Union([Type.String(), Type.Array(Type.Object({}, { additionalProperties: true }))])),
    stream: Type.Optional(Type.Boolean()),
    // OpenAI accepts explicit nulls for these; the SDKs send them when a caller spreads defaults.
    instructions: Type.Optional(Nullable(Type.String())),
    max_output_tokens: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
    temperature: Type.Optional(Nullable(Type.Number())),
    top_p: Type.Optional(Nullable(Type.Number())),
    tools: Type.Optional(Type.Array(Type.Object({}, { additionalProperties: true }))),
    tool_choice: Type.Optional(Type.Union([Type.String(), Type.Object({}, { additionalProperties: true })])),
    parallel_tool_calls: Type.Optional(Nullable(Type.Boolean())),
    reasoning: Type.Optional(Nullable(Type.Object({}, { additionalProperties: true }))),
    text: Type.Optional(Nullable(Type.Object({}, { additionalProperties: true }))),
    metadata: Type.Optional(Nullable(Type.Object({}, { additionalProperties: true }))),
    store: Type.Optional(Nullable(Type.Boolean())),
    previous_response_id: Type.Optional(Nullable(Type.String())),
    /** Refused by the decoder (stateless), with the others that name a stored object. */
    conversation: Type.Optional(Type.Unknown()),
    prompt: Type.Optional(Type.Unknown()),
    user: Type.Optional(Nullable(Type.String())),
    safety_identifier: Type.Optional(Nullable(Type.String())),
  },
  { additionalProperties: true },
)

export type ResponsesBody = Static<typeof ResponsesBody>
