# svc — the front door. `make run` and `make test` work on a fresh machine: both set up first.
SHELL := /bin/bash
BUN ?= $(shell command -v bun 2>/dev/null || echo bun)
export PATH := $(HOME)/.bun/bin:$(shell npm prefix -g 2>/dev/null)/bin:$(PATH)

.PHONY: setup run test check typecheck lint fmt build db-generate bench bench-path bench-ab clean

## setup: install Bun from npm when missing, then the project's dependencies
setup:
	@command -v bun >/dev/null 2>&1 || npm install -g bun
	@bun install --frozen-lockfile

## run: start the gateway on the default database (.svc/svc.db); ARGS go to `svc serve` (ARGS='--port 9090')
run: setup
	BUN_CONFIG_MAX_HTTP_REQUESTS=$${BUN_CONFIG_MAX_HTTP_REQUESTS:-4096} bun src/main.ts serve $(ARGS)

## test: the whole suite. The timeout is a flag because bunfig.toml has no setting for it: the
## tests that start servers and processes get 30 s on a slow machine instead of Bun's 5.
test: setup build
	bun test --timeout 30000

typecheck: setup
	bunx tsc --noEmit -p .

lint: setup
	bunx biome check src test bench

fmt: setup
	bunx biome check --write src test bench

## check: typecheck + lint + tests
check: typecheck lint test

## build: one executable with migrations embedded, proven on an empty database
# A compiled Bun binary would otherwise read bunfig.toml (whose `preload` runs code) and .env from
# whatever directory it is started in: svc's behaviour depends on svc.toml and the environment only.
build: setup
	bun build --compile --minify --sourcemap --no-compile-autoload-bunfig --no-compile-autoload-dotenv src/main.ts --outfile dist/svc
	@tmp=$$(mktemp -d) && cd $$tmp && printf 'preload = ["./planted.js"]\n' > bunfig.toml \
	  && echo 'require("fs").writeFileSync("planted-ran", "")' > planted.js \
	  && env -i HOME=$$tmp PATH=/usr/bin:/bin $(CURDIR)/dist/svc serve --once --port 0 --db $$tmp/svc.db \
	  && test ! -e planted-ran && rm -rf $$tmp
	@echo "dist/svc built and booted on an empty database"

## db-generate: a new migration from src/db/schema.ts, embedded for the binary
db-generate: setup
	bunx drizzle-kit generate
	bun src/db/embed-migrations.ts

## bench: svc against the upstream simulator and Portkey on loopback (bench/README.md); BENCH_QUICK=1 for a smoke run
bench: build
	bun bench/run.ts

## bench-path: svc's own request path in process, with and without the ledger write (bench/README.md)
bench-path: setup
	bun bench/request-path.ts

## bench-ab: two builds at once on the gateway's core, B against A (bench/README.md), e.g.
## make bench-ab A=/tmp/svc-before SCENARIO=body32k-c64; B_ENV=NAME=value tries a setting on dist/svc
A ?= dist/svc
B ?= dist/svc
SCENARIO ?= nonstream-c64
ROUNDS ?= 4
bench-ab: build
	bun bench/side-by-side.ts --a $(A) --b $(B) --scenario $(SCENARIO) --rounds $(ROUNDS) \
	  $(if $(A_ENV),--a-env $(A_ENV)) $(if $(B_ENV),--b-env $(B_ENV))

clean:
	rm -rf dist
