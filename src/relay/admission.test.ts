import { expect, test } from 'bun:test'
import { expectedBytes, RequestAdmission } from './admission'

const request = (signal?: AbortSignal) => new Request('http://svc/compat-a/v1/messages', { method: 'POST', signal })
/** A budget of exactly two bodies of 100 KB. */
const budget = 2 * expectedBytes(100_000)

test('those waiting are admitted in their order: a large request is not passed over by smaller ones', async () => {
  const gate = new RequestAdmission(budget, 100)
  const first = request()
  gate.admitBeforeBody(first, 100_000)
  gate.admitBeforeBody(request(), 100_000)
  const admitted: string[] = []
  const large = request()
  const small = request()
  const waits = [
    gate.admitBeforeBody(large, 150_000)?.then(() => admitted.push('large')),
    gate.admitBeforeBody(small, 1_000)?.then(() => admitted.push('small')),
  ]
  expect(waits.every((wait) => wait instanceof Promise)).toBe(true)
  gate.release(gate.claim(first))
  await Bun.sleep(1)
  // Room for the small one, not for the large one ahead of it: neither goes yet.
  expect(admitted).toEqual([])
  expect(() => gate.admit(1_000)).toThrow('svc is serving as many requests as its memory allows')
  // The large one's time runs out; the head of the line gone, the small one behind it goes.
  expect((await Promise.allSettled(waits)).map((r) => r.status)).toEqual(['rejected', 'fulfilled'])
  expect(admitted).toEqual(['small'])
})

test('a client already gone takes no turn; at shutdown those waiting are refused at once', async () => {
  const gate = new RequestAdmission(budget, 5_000)
  gate.admitBeforeBody(request(), 400_000)
  await expect(gate.admitBeforeBody(request(AbortSignal.abort()), 1_000)!).rejects.toMatchObject({ status: 529 })
  const waiting = gate.admitBeforeBody(request(), 1_000)!
  gate.refuseWaiting()
  await expect(waiting).rejects.toMatchObject({ status: 529 })
  expect(() => gate.admit(1_000)).toThrow('svc is serving as many requests as its memory allows')
})

test('a client that leaves while it waits gives up its turn, and takes no place later', async () => {
  const gate = new RequestAdmission(budget, 5_000)
  const holder = request()
  gate.admitBeforeBody(holder, 400_000)
  const client = new AbortController()
  const leaving = request(client.signal)
  const wait = gate.admitBeforeBody(leaving, 100_000)!
  client.abort()
  await expect(wait).rejects.toMatchObject({ kind: 'overloaded', status: 529 })
  gate.release(gate.claim(holder))
  expect(gate.claim(leaving)).toBeUndefined()
  // All the room is there again: two bodies of 100 KB are taken at once.
  expect(gate.admitBeforeBody(request(), 100_000)).toBeUndefined()
  expect(gate.admitBeforeBody(request(), 100_000)).toBeUndefined()
})

test('waiting bodies take at most a quarter of the budget: Bun reads them all the same', async () => {
  const gate = new RequestAdmission(budget, 100)
  gate.admitBeforeBody(request(), 400_000)
  const quarter = budget / 4
  // The first waits whatever its size; the next only within the quarter.
  const first = gate.admitBeforeBody(request(), Math.floor(quarter * 1.5))
  expect(first).toBeInstanceOf(Promise)
  await expect(gate.admitBeforeBody(request(), Math.floor(quarter * 0.6))!).rejects.toMatchObject({ status: 529 })
  await expect(first!).rejects.toMatchObject({ status: 529 })
})
