// The page's only way to the gateway: the existing JSON APIs with `Authorization: Bearer`. The key
// lives in sessionStorage (gone when the tab closes) and never in a cookie, so no other site can
// make the browser send it: there is no CSRF surface.

const STORAGE_KEY = 'svc.apiKey'

export const credentials = {
  get: () => sessionStorage.getItem(STORAGE_KEY),
  set: (key) => sessionStorage.setItem(STORAGE_KEY, key),
  clear: () => sessionStorage.removeItem(STORAGE_KEY),
}

export class ApiError extends Error {
  constructor(status, message) {
    super(message)
    this.name = 'ApiError'
    this.status = status
  }
}

/** GET (or POST with `body`) a JSON route; a non-2xx answer throws the gateway's own message. */
export async function api(path, { body, signal, key = credentials.get() } = {}) {
  const headers = { authorization: `Bearer ${key ?? ''}` }
  if (body !== undefined) headers['content-type'] = 'application/json'
  const res = await fetch(path, {
    method: body === undefined ? 'GET' : 'POST',
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal,
  })
  const data = await res.json().catch(() => null)
  if (!res.ok) throw new ApiError(res.status, data?.error?.message ?? `${res.status} ${res.statusText}`)
  return data
}

/** "/v1/x" + {a: 1, b: undefined} → "/v1/x?a=1": absent values are left out. */
export function withQuery(path, params) {
  const q = new URLSearchParams()
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v))
  const text = q.toString()
  return text ? `${path}?${text}` : path
}
