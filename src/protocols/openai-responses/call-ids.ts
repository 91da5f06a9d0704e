// A Responses client's history as OpenAI reads it: a call a Gemini model made through a Chat
// upstream carries its thought signature in its call_id (thought-signature.ts), kilobytes only
// Gemini reads. OpenAI gets the id as Gemini gave it, calls and their outputs alike.
import { isObject } from '../wire-values'
import { withoutThoughtSignature } from '../thought-signature'

const carriesSignature = (item: unknown): boolean =>
  isObject(item) && typeof item.call_id === 'string' && withoutThoughtSignature(item.call_id) !== item.call_id

/** The items with every call_id as the provider gave it; the same array when none carries a signature. */
export const withProviderCallIds = (items: unknown[]): unknown[] =>
  items.some(carriesSignature)
    ? items.map((item) =>
        carriesSignature(item)
          ? {
              ...(item as Record<string, unknown>),
              call_id: withoutThoughtSignature((item as { call_id: string }).call_id),
            }
          : item,
      )
    : items
