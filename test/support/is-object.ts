// The JSON-object check the test support shares: the simulator imports nothing of svc's own, so
// it does not take src/protocols/wire-values.ts's.
export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v)
