import { expect, test } from 'bun:test'
import { cgroupMemoryLimit } from './memory-limit'

const files = (entries: Record<string, string>) => (path: string) => entries[path]

test('the cgroup memory limit: a unit’s on the host (v2), a container’s at the root, v1; none for "max"', () => {
  expect(
    cgroupMemoryLimit(
      files({
        '/proc/self/cgroup': '0::/system.slice/svc.service\n',
        '/sys/fs/cgroup/system.slice/svc.service/memory.max': '536870912\n',
      }),
    ),
  ).toBe(512 * 1024 ** 2)
  expect(cgroupMemoryLimit(files({ '/proc/self/cgroup': '0::/\n', '/sys/fs/cgroup/memory.max': '268435456\n' }))).toBe(
    256 * 1024 ** 2,
  )
  expect(
    cgroupMemoryLimit(
      files({
        '/proc/self/cgroup': '12:cpu,cpuacct:/x\n7:memory:/limits-audit\n',
        '/sys/fs/cgroup/memory/limits-audit/memory.limit_in_bytes': '268435456\n',
        '/sys/fs/cgroup/memory/memory.limit_in_bytes': '9223372036854771712\n',
      }),
    ),
  ).toBe(256 * 1024 ** 2)
  expect(
    cgroupMemoryLimit(
      files({ '/proc/self/cgroup': '0::/user.slice\n', '/sys/fs/cgroup/user.slice/memory.max': 'max\n' }),
    ),
  ).toBeUndefined()
  expect(cgroupMemoryLimit(files({}))).toBeUndefined()
})

test('a limit on a group above its own binds too: a slice’s MemoryMax=, a v1 parent’s', () => {
  expect(
    cgroupMemoryLimit(
      files({
        '/proc/self/cgroup': '0::/svc.slice/svc.service\n',
        '/sys/fs/cgroup/svc.slice/svc.service/memory.max': 'max\n',
        '/sys/fs/cgroup/svc.slice/memory.max': '1073741824\n',
      }),
    ),
  ).toBe(1024 ** 3)
  expect(
    cgroupMemoryLimit(
      files({
        '/proc/self/cgroup': '7:memory:/pods/svc\n',
        '/sys/fs/cgroup/memory/pods/svc/memory.limit_in_bytes': '9223372036854771712\n',
        '/sys/fs/cgroup/memory/pods/memory.limit_in_bytes': '536870912\n',
      }),
    ),
  ).toBe(512 * 1024 ** 2)
})
