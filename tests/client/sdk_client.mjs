// A real MCP client against the real binary: the official TypeScript SDK
// (@modelcontextprotocol/sdk, pinned in package.json) starts strata through its
// StdioClientTransport, as an agent host does, and uses every tool under both name sets.
// Every result is checked against its tool's outputSchema twice: by the SDK's own
// Client.callTool (counted, so a skipped validation fails) and by a strict JSON Schema 2020-12
// validator that also checks the schemas themselves.
//
// With STRATA_TEST_STORE=postgresql each session's store is a new database (stores.mjs).
//
// Run: node tests/client/sdk_client.mjs <path-to-strata>   (after `npm ci` in tests/client)
// Prints one `ok - ...` / `not ok - ...` line per check and exits 1 if any failed. Exits 77
// (a skip, for Meson) when the SDK is not installed, unless CI is set: then that fails.

import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';

import { ON_POSTGRES, newStore } from './stores.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
// Bounds against a hung server, never expectations about speed.
const REQUEST_TIMEOUT_MS = 30_000;
const EMBED_TIMEOUT_MS = 120_000;
const EXIT_TIMEOUT_MS = 15_000;
const DEADLINE_MS = 270_000; // Meson's timeout for this test is 300 s.

// Memories written (with --embedder none) ahead of the ones the progress check embeds itself:
// the background worker embeds oldest first, so it is still busy with these when the embed
// call asks for the newer ones (the same arrangement as tests/e2e/test_embed.py). On PostgreSQL
// fewer: writes there take longer, and the worker, whose embedder is the same, is as far behind.
const FILLER = ON_POSTGRES ? 3000 : 10000;
const TARGETS = 300;

const CANONICAL_TOOLS = [
  'remember', 'remember_batch', 'recall', 'get', 'history', 'as_of', 'valid_at', 'bitemporal',
  'forget', 'purge', 'embed', 'stats',
];
// docs/compat.md: the names a Perseus Vault client calls; remember_batch and purge have none.
const PERSEUS_NAMES = {
  remember: 'perseus_vault_remember',
  recall: 'perseus_vault_recall',
  get: 'perseus_vault_get_entity',
  history: 'perseus_vault_history',
  as_of: 'perseus_vault_as_of',
  valid_at: 'perseus_vault_valid_at',
  bitemporal: 'perseus_vault_bitemporal',
  forget: 'perseus_vault_forget',
  embed: 'perseus_vault_embed',
  stats: 'perseus_vault_stats',
};

// ---------------------------------------------------------------------------------------------
// Reporting.

let checks = 0;
let failures = 0;

function report(passed, description, detail) {
  checks += 1;
  if (passed) {
    console.log(`ok - ${description}`);
    return;
  }
  failures += 1;
  console.log(`not ok - ${description}`);
  if (detail) console.log(String(detail).replace(/^/gm, '#   '));
}

// Runs one check; a thrown error (a failed assertion, an SDK error, a timeout) fails it.
async function check(description, body) {
  try {
    const value = await body();
    report(true, description);
    return value;
  } catch (error) {
    report(false, description, error?.stack ?? error);
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// Arguments and dependencies.

const strataPath = process.argv[2];
if (!strataPath) {
  console.error('usage: node sdk_client.mjs <path-to-strata>');
  process.exit(2);
}

const pinned = JSON.parse(readFileSync(path.join(HERE, 'package.json'), 'utf8')).dependencies;
const installedSdk = path.join(HERE, 'node_modules', '@modelcontextprotocol', 'sdk',
  'package.json');
if (!existsSync(installedSdk)) {
  const why = 'the MCP SDK is not installed: run `npm ci` in tests/client (tools/test does)';
  if (process.env.CI) {
    report(false, why);
    process.exit(1);
  }
  console.log(`# skip: ${why}`);
  process.exit(77);
}

const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
const { AjvJsonSchemaValidator } = await import('@modelcontextprotocol/sdk/validation/ajv');
const { CallToolResultSchema, EmptyResultSchema, ErrorCode, LATEST_PROTOCOL_VERSION, McpError } =
  await import('@modelcontextprotocol/sdk/types.js');
const { Ajv2020 } = await import('ajv/dist/2020.js');

const sdkVersion = JSON.parse(readFileSync(installedSdk, 'utf8')).version;

// ---------------------------------------------------------------------------------------------
// The strict validator: JSON Schema 2020-12 (MCP's default dialect), schemas checked against
// the meta-schema, unknown keywords refused. The SDK's own Ajv skips both of those checks.

const strictAjv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });

function compileStrict(schema, what) {
  try {
    return strictAjv.compile(schema);
  } catch (error) {
    throw new Error(`${what} is not a valid strict JSON Schema 2020-12: ${error.message}`);
  }
}

function strictProblems(validate, value) {
  if (validate(value)) return null;
  return validate.errors ? strictAjv.errorsText(validate.errors, { dataVar: 'value' })
    : 'its schema did not compile';
}

// The SDK's validator (the one Client.callTool uses), counting each validation it performs.
class CountingValidator {
  constructor() {
    this.inner = new AjvJsonSchemaValidator();
    this.validations = 0;
  }

  getValidator(schema) {
    const validate = this.inner.getValidator(schema);
    return (input) => {
      this.validations += 1;
      return validate(input);
    };
  }
}

// A transport between the SDK's Client and its StdioClientTransport that keeps every message
// in both directions and can alter the next tool result on its way to the client.
class TapTransport {
  constructor(inner) {
    this.inner = inner;
    this.sent = [];
    this.received = [];
    this.alterNextToolResult = null;
    inner.onmessage = (message, extra) => {
      this.received.push(message);
      if (this.alterNextToolResult && message.result?.content) {
        const alter = this.alterNextToolResult;
        this.alterNextToolResult = null;
        message = alter(structuredClone(message));
      }
      this.onmessage?.(message, extra);
    };
    inner.onclose = () => this.onclose?.();
    inner.onerror = (error) => this.onerror?.(error);
  }

  start() { return this.inner.start(); }

  send(message, options) {
    this.sent.push(message);
    return this.inner.send(message, options);
  }

  close() { return this.inner.close(); }
}

function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

// ---------------------------------------------------------------------------------------------
// A session: one strata process and the SDK client connected to it.

const sessions = new Set();

class Session {
  constructor(label, args) {
    this.label = label;
    this.args = args;
    this.stderr = '';
    this.errors = []; // What the SDK reported through onerror (e.g. a line it could not parse).
    this.tools = new Map(); // name -> {tool, input, output}: the listing and strict validators.
    this.validatedTools = new Set();
    this.validator = new CountingValidator();
    this.failuresBefore = failures;
    this.hung = null; // Why requests are no longer sent, after one timed out.
  }

  async open(cwd) {
    this.transport = new StdioClientTransport({
      command: strataPath, args: this.args, cwd, stderr: 'pipe',
    });
    // Drained as it comes, so the server never blocks on a full pipe; kept for failure reports.
    this.transport.stderr.on('data', (chunk) => {
      this.stderr = (this.stderr + chunk.toString()).slice(-8000);
    });
    this.tap = new TapTransport(this.transport);
    this.client = new Client({ name: 'strata-sdk-client-test', version: '1.0.0' },
      { jsonSchemaValidator: this.validator });
    this.client.onerror = (error) => this.errors.push(error);
    sessions.add(this);
    await this.client.connect(this.tap, { timeout: REQUEST_TIMEOUT_MS });
    this.pid = this.transport.pid;
    // The SDK does not expose its child process; its exit status is read from the transport's
    // field (pinned SDK version) to check that strata exits by itself, 0, when stdin closes.
    const child = this.transport._process;
    assert.ok(child && typeof child.once === 'function', 'the transport has its child process');
    this.exited = child.exitCode !== null
      ? Promise.resolve({ code: child.exitCode, signal: child.signalCode })
      : new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  }

  // The initialize exchange as it went over the wire.
  handshake() {
    const request = this.tap.sent.find((m) => m.method === 'initialize');
    const response = this.tap.received.find((m) => request && m.id === request.id);
    return { request, response };
  }

  // tools/list; throws after listing them all if a schema is not strict JSON Schema (calls of
  // that tool then fail too, while the other tools stay usable).
  async listTools() {
    const { tools } = await this.client.listTools(undefined, { timeout: REQUEST_TIMEOUT_MS });
    this.tools.clear();
    const problems = [];
    const compile = (schema, what) => {
      try {
        return compileStrict(schema, what);
      } catch (error) {
        problems.push(error.message);
        return () => false;
      }
    };
    for (const tool of tools) {
      this.tools.set(tool.name, {
        tool,
        input: compile(tool.inputSchema, `${tool.name}'s inputSchema`),
        output: compile(tool.outputSchema, `${tool.name}'s outputSchema`),
      });
    }
    if (problems.length) throw new Error(problems.join('\n'));
    return tools;
  }

  // tools/call through Client.callTool; the raw result, whatever isError says. After one
  // request timed out, the others fail at once instead of waiting out their own timeouts.
  async callRaw(name, args, options = {}) {
    if (this.hung) throw new Error(`not sent: ${this.hung}`);
    try {
      return await this.client.callTool({ name, arguments: args }, CallToolResultSchema,
        { timeout: REQUEST_TIMEOUT_MS, ...options });
    } catch (error) {
      if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
        this.hung = `${name} had no answer within its timeout`;
      }
      throw error;
    }
  }

  // A call that must succeed: returns its structuredContent after checking that the SDK
  // validated it against the outputSchema, that it also passes the strict validator, and that
  // content[0].text holds the same object (what text-reading clients parse).
  async call(name, args, options = {}) {
    const listed = this.tools.get(name);
    assert.ok(listed, `${name} is listed by tools/list`);
    const argProblems = strictProblems(listed.input, args);
    assert.equal(argProblems, null, `${name}: the test's own arguments fit inputSchema`);
    const before = this.validator.validations;
    const result = await this.callRaw(name, args, options);
    assert.equal(result.isError, false,
      `${name} answered isError: ${result.content?.[0]?.text ?? JSON.stringify(result)}`);
    assert.equal(typeof result.structuredContent, 'object', `${name}: structuredContent`);
    assert.equal(this.validator.validations, before + 1,
      `${name}: Client.callTool validated structuredContent against outputSchema`);
    const problems = strictProblems(listed.output, result.structuredContent);
    assert.equal(problems, null, `${name}: structuredContent fits outputSchema (strict)`);
    assert.equal(result.content?.[0]?.type, 'text', `${name}: content[0] is text`);
    assert.deepEqual(JSON.parse(result.content[0].text), result.structuredContent,
      `${name}: content[0].text is the structuredContent`);
    this.validatedTools.add(name);
    return result.structuredContent;
  }

  // A call that must be a tool error: returns its message.
  async callError(name, args) {
    const result = await this.callRaw(name, args);
    assert.equal(result.isError, true, `${name} must fail: ${JSON.stringify(result)}`);
    assert.equal(result.content?.[0]?.type, 'text', `${name}: the error is text`);
    return result.content[0].text;
  }

  // Closes the client (the SDK ends strata's stdin, then signals it if it lingers) and returns
  // how strata exited.
  async close() {
    if (!sessions.has(this)) return undefined;
    sessions.delete(this);
    await withTimeout(this.client.close(), EXIT_TIMEOUT_MS, `${this.label}: close`);
    if (!this.exited) return undefined;
    return withTimeout(this.exited, EXIT_TIMEOUT_MS, `${this.label}: exit`);
  }

  // Where the response to request `id` stands among the messages received (-1: none yet).
  responseAt(id) {
    return this.tap.received.findIndex((m) => m.method === undefined && m.id === id);
  }

  // Whether `error` is the SDK's report of a progress notification it handled after its
  // request's response although strata wrote it before: the SDK hands a notification to its
  // handler a turn after reading it and a response at once, so those read in one chunk with
  // the response find their token gone (typescript-sdk issue 2580, a race servers cannot
  // avoid; on a loaded machine the client reads several lines at a time). The wire order
  // (the tap) tells that case from a notification strata sent late or with a wrong token.
  sentBeforeItsResponse(error) {
    const found = /^Received a progress notification for an unknown token: (.*)$/s
      .exec(error?.message ?? '');
    if (!found) return false;
    const notification = JSON.parse(found[1]);
    const at = this.tap.received.findIndex((m) => m.method === 'notifications/progress'
      && isDeepStrictEqual(m.params, notification.params));
    return at >= 0 && this.responseAt(notification.params?.progressToken) > at;
  }

  // The checks every session ends with.
  async finish(expectedTools, which = 'every listed tool') {
    await check(`${this.label}: ${which}: results validated against the outputSchema`,
      () => assert.deepEqual([...this.validatedTools].sort(), [...expectedTools].sort()));
    await check(`${this.label}: every server message parsed as JSON-RPC; the SDK reported no error`,
      () => assert.deepEqual(
        this.errors.filter((e) => !this.sentBeforeItsResponse(e)).map(String), []));
    const pid = this.pid;
    await check(`${this.label}: strata exits 0 by itself when the client closes its stdin`,
      async () => {
        const exit = await this.close();
        assert.deepEqual(exit, { code: 0, signal: null });
        assert.throws(() => process.kill(pid, 0), { code: 'ESRCH' }, 'the process is gone');
      });
  }
}

// After a session with a failed check: the end of what strata wrote to stderr.
function dumpStderr(session) {
  if (failures === session.failuresBefore || !session.stderr) return;
  console.log(`# ${session.label}: strata's stderr ends with:`);
  console.log(session.stderr.trimEnd().replace(/^/gm, '#   '));
}

async function openSession(label, root, args) {
  const dir = path.join(root, label.replace(/[^a-z0-9]+/gi, '-'));
  await mkdir(dir);
  const store = newStore(dir, `sdk_${label.replace(/[^a-z0-9]+/gi, '_')}`);
  const session = new Session(label, [...store.args, ...args]);
  await withTimeout(session.open(dir), REQUEST_TIMEOUT_MS + 5_000, `${label}: connect`);
  return session;
}

function isMcpError(code, pattern) {
  return (error) => {
    assert.ok(error instanceof McpError, `an McpError, got ${error?.stack ?? error}`);
    assert.equal(error.code, code, error.message);
    assert.match(error.message, pattern);
    return true;
  };
}

const day = (iso) => Date.parse(`${iso}T00:00:00Z`);

// ---------------------------------------------------------------------------------------------
// Canonical tools: docs/design.md §3's retroactive correction, every tool, every kind of error.

async function canonicalSession(root) {
  const s = await check('canonical: the SDK connects to strata over stdio (initialize)',
    () => openSession('canonical', root, []));
  if (!s) return;
  try {
    await check(`canonical: protocol version negotiated is the SDK ${sdkVersion}'s newest, `
      + `${LATEST_PROTOCOL_VERSION}`, () => {
      const { request, response } = s.handshake();
      assert.equal(request.params.protocolVersion, LATEST_PROTOCOL_VERSION);
      assert.equal(response.result.protocolVersion, LATEST_PROTOCOL_VERSION);
      assert.equal(s.client.getServerVersion()?.name, 'strata');
      assert.ok(s.client.getServerCapabilities()?.tools, 'the tools capability');
      assert.equal(typeof s.client.getInstructions(), 'string');
    });
    await check('canonical: ping', async () => {
      assert.deepEqual(await s.client.ping({ timeout: REQUEST_TIMEOUT_MS }), {});
    });
    await check('canonical: tools/list lists the 12 canonical tools, each schema strict '
      + 'JSON Schema 2020-12', async () => {
      const tools = await s.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), [...CANONICAL_TOOLS].sort());
      for (const t of tools) {
        assert.ok(t.title && t.description, `${t.name}: title and description`);
        assert.equal(typeof t.annotations?.readOnlyHint, 'boolean', `${t.name}: readOnlyHint`);
        assert.equal(t.outputSchema?.type, 'object', `${t.name}: outputSchema`);
      }
    });

    const identity = { category: 'people', key: 'maria-role' };
    const senior = { text: 'Maria is a senior engineer on the storage team' };
    const staff = { text: 'Maria is a staff engineer on the storage team' };
    const v1 = await check('remember: a new memory is created', async () => {
      const r = await s.call('remember', { ...identity, body: senior, valid_from: '2025-01-01',
        valid_to: '2025-06-01' });
      assert.equal(r.action, 'created');
      assert.equal(r.version, 1);
      assert.equal(r.valid_from, day('2025-01-01'));
      assert.equal(r.valid_to, day('2025-06-01'));
      return r;
    });
    const v2 = await check('remember: a changed body is a new version', async () => {
      const r = await s.call('remember', { ...identity, body: staff, valid_from: '2025-06-01' });
      assert.equal(r.action, 'updated');
      assert.equal(r.version, 2);
      assert.equal(r.id, v1?.id);
      assert.equal(r.valid_to, null);
      assert.ok(r.recorded_at > v1.recorded_at, 'recorded_at increases');
      return r;
    });
    await check('remember: the same body again is unchanged', async () => {
      const r = await s.call('remember', { ...identity, body: staff, valid_from: '2025-06-01' });
      assert.equal(r.action, 'unchanged');
      assert.equal(r.version, 2);
    });
    await check('remember: a short near-duplicate under a new key is kept and named similar', async () => {
      // Five words: the meaning lives in the key too, so two keys are two facts.
      const r = await s.call('remember', { category: 'people', key: 'maria-title',
        body: { text: 'Maria is a staff engineer on the storage team.' } });
      assert.equal(r.action, 'created');
      assert.equal(r.similar?.[0]?.key, identity.key);
      assert.ok(r.similar[0].similarity >= 0.7 && r.similar[0].similarity <= 1,
        `similarity ${r.similar[0].similarity}`);
      await s.call('purge', { category: 'people', key: 'maria-title' });
    });
    await check('remember_batch: a result per item; a bad item fails alone', async () => {
      const r = await s.call('remember_batch', { items: [
        { category: 'projects', key: 'atlas', body: 'Atlas ships the new storage engine' },
        { category: 'projects', key: 'boreas', body: { text: 'Boreas migrates the queue' } },
        { category: 'projects', body: 'no key' },
      ] });
      assert.deepEqual([r.created, r.failed, r.ok], [2, 1, false]);
      assert.equal(r.results.length, 3);
      assert.match(r.results[2].error, /key/);
    });
    await check('recall: finds the memory by its words', async () => {
      const r = await s.call('recall', { query: 'staff engineer storage', limit: 5 });
      assert.ok(r.items.some((i) => i.key === identity.key), JSON.stringify(r.items));
      assert.equal(r.total, r.items.length);
      assert.ok(['fts5', 'dense', 'hybrid'].includes(r.mode), r.mode);
    });
    await check('get: by (category, key), by id, and not found', async () => {
      const byKey = await s.call('get', identity);
      assert.equal(byKey.found, true);
      assert.equal(byKey.version, 2);
      assert.deepEqual(byKey.body, staff);
      const byId = await s.call('get', { id: v1.id });
      assert.equal(byId.key, identity.key);
      const missing = await s.call('get', { category: 'people', key: 'nobody' });
      assert.equal(missing.found, false);
      assert.equal((await s.call('get', { id: 999999 })).found, false);
    });
    await check('history: every version, newest first', async () => {
      const r = await s.call('history', identity);
      assert.deepEqual(r.versions.map((v) => v.version), [2, 1]);
      assert.equal(r.total, 2);
      assert.equal(r.versions[1].superseded_at, v2.recorded_at);
    });
    await check('as_of: what was believed then', async () => {
      const then = await s.call('as_of', { ...identity, as_of: v1.recorded_at });
      assert.deepEqual([then.found, then.version], [true, 1]);
      const before = await s.call('as_of', { ...identity, as_of: v1.recorded_at - 1 });
      assert.equal(before.found, false);
    });
    await check('valid_at: what was true then, as believed now', async () => {
      const march = await s.call('valid_at', { ...identity, valid_at: '2025-03-01' });
      assert.deepEqual(march.body, senior);
      const september = await s.call('valid_at', { ...identity, valid_at: '2025-09-01' });
      assert.deepEqual(september.body, staff);
      const earlier = await s.call('valid_at', { ...identity, valid_at: '2024-06-01' });
      assert.equal(earlier.found, false);
    });
    await check('bitemporal: both time axes', async () => {
      const old = await s.call('bitemporal',
        { ...identity, tx_at: v1.recorded_at, valid_at: '2025-09-01' });
      assert.equal(old.found, false);
      const now = await s.call('bitemporal',
        { ...identity, tx_at: v2.recorded_at, valid_at: '2025-03-01' });
      assert.deepEqual(now.body, senior);
    });
    await check('forget: belief ends, history stays', async () => {
      const r = await s.call('forget', { ...identity, reason: 'left the team' });
      assert.equal(r.found, true);
      assert.equal((await s.call('get', identity)).found, false);
      const recalled = await s.call('recall', { query: 'staff engineer storage' });
      assert.ok(!recalled.items.some((i) => i.key === identity.key), 'recall no longer finds it');
      assert.equal((await s.call('history', identity)).total, 2);
    });
    await check('purge: every version erased', async () => {
      const r = await s.call('purge', identity);
      assert.deepEqual([r.found, r.purged_versions], [true, 2]);
      assert.equal((await s.call('history', identity)).found, false);
    });
    await check('stats: counts and the embedder', async () => {
      const r = await s.call('stats', {});
      assert.equal(r.active_memories, 2); // atlas and boreas
      assert.equal(r.by_category.projects, 2);
      assert.equal(typeof r.embeddings?.embedder, 'string');
    });
    await check('embed: nothing left without a vector afterwards', async () => {
      const r = await s.call('embed', {}, { timeout: EMBED_TIMEOUT_MS });
      assert.deepEqual([r.remaining, r.failed], [0, 0]);
      assert.equal(r.attempted, r.embedded);
    });

    // Errors: a protocol fault is a JSON-RPC error (the SDK throws McpError); a bad argument is
    // a result with isError and a message naming the argument, the rule and the value.
    await check('errors: an unknown tool is a JSON-RPC error -32602 naming it', async () => {
      await assert.rejects(s.callRaw('no_such_tool', {}),
        isMcpError(ErrorCode.InvalidParams, /Unknown tool.*no_such_tool/));
    });
    await check('errors: an unknown method is a JSON-RPC error -32601', async () => {
      await assert.rejects(
        s.client.request({ method: 'no/such/method', params: {} }, EmptyResultSchema,
          { timeout: REQUEST_TIMEOUT_MS }),
        isMcpError(ErrorCode.MethodNotFound, /no\/such\/method/));
    });
    await check('errors: recall limit out of range is isError naming limit, rule and value',
      async () => {
        const text = await s.callError('recall', { query: 'x', limit: 5000 });
        assert.match(text, /^limit: .*1000.*5000/);
      });
    await check('errors: remember without key is isError naming key', async () => {
      assert.match(await s.callError('remember', { category: 'people', body: 'x' }), /^key: /);
    });
    await check('errors: a time that is not a time is isError naming the argument', async () => {
      const text = await s.callError('as_of', { ...identity, as_of: 'last tuesday-ish' });
      assert.match(text, /^as_of: .*last tuesday-ish/);
    });
    await check('errors: a wrong type is isError naming the argument and the type', async () => {
      assert.match(await s.callError('history', { ...identity, limit: 'ten' }), /^limit: .*ten/);
    });
    await check('errors: the server keeps serving after them', async () => {
      assert.equal((await s.call('stats', {})).active_memories, 2);
    });

    // The validation must be able to fail: a result altered on its way to the SDK (a required
    // field removed) is refused by Client.callTool and by the strict validator.
    await check('control: a result that breaks its outputSchema is refused by the SDK',
      async () => {
        let altered;
        s.tap.alterNextToolResult = (message) => {
          delete message.result.structuredContent.total_memories;
          altered = message.result.structuredContent;
          return message;
        };
        await assert.rejects(s.callRaw('stats', {}),
          isMcpError(ErrorCode.InvalidParams, /output schema.*total_memories/));
        assert.match(strictProblems(s.tools.get('stats').output, altered) ?? '',
          /total_memories/);
      });
    await s.finish(CANONICAL_TOOLS);
  } finally {
    await s.close().catch(() => {});
    dumpStderr(s);
  }
}

// ---------------------------------------------------------------------------------------------
// A Perseus Vault client (docs/compat.md): its tool names, its argument names, its fields.

async function perseusSession(root) {
  const s = await check('perseus: the SDK connects to strata --compat perseus-vault',
    () => openSession('perseus', root, ['--compat', 'perseus-vault']));
  if (!s) return;
  const listedNames = CANONICAL_TOOLS.map((name) => PERSEUS_NAMES[name] ?? name);
  try {
    await check('perseus: tools/list shows the perseus_vault_* names (and remember_batch, purge)',
      async () => {
        const tools = await s.listTools();
        assert.deepEqual(tools.map((t) => t.name).sort(), [...listedNames].sort());
      });
    const identity = { category: 'decisions', key: 'db-engine' };
    const v1 = await check('perseus_vault_remember: body_json, *_unix_ms, skip_dedup', async () => {
      const r = await s.call('perseus_vault_remember', { ...identity,
        body_json: JSON.stringify({ text: 'We use SQLite for storage', owner: 'ana' }),
        type: 'decision', tags: ['storage'], importance: 0.8,
        valid_from_unix_ms: day('2025-01-01'), skip_dedup: true });
      assert.deepEqual([r.ok, r.action, r.category, r.key],
        [true, 'created', identity.category, identity.key]);
      return r;
    });
    const v2 = await check('perseus_vault_remember: times as numeric strings', async () => {
      const r = await s.call('perseus_vault_remember', { ...identity,
        body_json: JSON.stringify({ text: 'We use SQLite in WAL mode for storage', owner: 'ana' }),
        type: 'decision', valid_from_unix_ms: String(day('2025-05-01')) });
      assert.equal(r.action, 'updated');
      assert.equal(r.valid_from, day('2025-05-01'));
      return r;
    });
    await check('perseus_vault_get_entity: by id, with the Perseus fields', async () => {
      const r = await s.call('perseus_vault_get_entity', { id: v1.id });
      assert.equal(r.found, true);
      assert.equal(JSON.parse(r.body_json).text, 'We use SQLite in WAL mode for storage');
      assert.deepEqual([r.entity_type, r.is_live_version, r.invalidated_at_unix_ms],
        ['decision', true, null]);
      assert.equal(r.valid_from_unix_ms, day('2025-05-01'));
    });
    await check('perseus_vault_recall: items carry body_json and the body\'s fields', async () => {
      const r = await s.call('perseus_vault_recall', { query: 'SQLite storage', limit: 10,
        trust_weight: 0.5, min_decay: 0.1 });
      const item = r.items.find((i) => i.key === identity.key);
      assert.ok(item, JSON.stringify(r.items));
      assert.equal(typeof item.body_json, 'string');
      assert.equal(item.owner, 'ana');
    });
    await check('perseus_vault_recall: as_of_unix_ms searches the past', async () => {
      const r = await s.call('perseus_vault_recall', { query: 'SQLite',
        as_of_unix_ms: v1.recorded_at });
      const item = r.items.find((i) => i.key === identity.key);
      assert.ok(item, JSON.stringify(r.items));
      assert.deepEqual([item.version, item.is_live_version, item.recorded_at_unix_ms],
        [1, false, v1.recorded_at]);
      assert.equal(item.valid_from_unix_ms, day('2025-01-01'));
    });
    await check('perseus_vault_history: versions, total, returned', async () => {
      const r = await s.call('perseus_vault_history', { ...identity, limit: 20, offset: 0 });
      assert.deepEqual([r.total, r.returned, r.versions.map((v) => v.version)], [2, 2, [2, 1]]);
    });
    await check('perseus_vault_as_of: as_of_unix_ms, echoed', async () => {
      const r = await s.call('perseus_vault_as_of', { ...identity, as_of_unix_ms: v1.recorded_at });
      assert.deepEqual([r.found, r.version, r.is_live_version], [true, 1, false]);
      assert.equal(r.as_of_unix_ms, v1.recorded_at);
      assert.equal(r.invalidated_at_unix_ms, v2.recorded_at);
    });
    await check('perseus_vault_valid_at: valid_at_unix_ms, echoed', async () => {
      const r = await s.call('perseus_vault_valid_at', { ...identity,
        valid_at_unix_ms: day('2025-03-01') });
      assert.deepEqual([r.found, r.version, r.valid_at_unix_ms], [true, 1, day('2025-03-01')]);
    });
    await check('perseus_vault_bitemporal: tx_at_unix_ms and valid_at_unix_ms', async () => {
      const r = await s.call('perseus_vault_bitemporal', { ...identity,
        tx_at_unix_ms: v1.recorded_at, valid_at_unix_ms: day('2025-09-01') });
      assert.deepEqual([r.found, r.version, r.tx_at_unix_ms], [true, 1, v1.recorded_at]);
    });
    await check('perseus_vault_embed: batch_category and batch_limit', async () => {
      const r = await s.call('perseus_vault_embed', { batch_category: identity.category,
        batch_limit: 100 }, { timeout: EMBED_TIMEOUT_MS });
      assert.equal(r.attempted, r.embedded);
      assert.equal(r.failed, 0);
    });
    await check('perseus_vault_stats: total_entities and active_entities', async () => {
      const r = await s.call('perseus_vault_stats', {});
      assert.deepEqual([r.total_entities, r.active_entities], [1, 1]);
      assert.equal(typeof r.db_file_size_bytes, 'number');
    });
    await check('remember_batch and purge keep their names under --compat', async () => {
      const r = await s.call('remember_batch', { items: [
        { category: 'scratch', key: 'a', body: 'temporary note', dedup: false }] });
      assert.equal(r.created, 1);
      const p = await s.call('purge', { category: 'scratch', key: 'a' });
      assert.deepEqual([p.found, p.purged_versions], [true, 1]);
    });
    await check('perseus_vault_forget: found', async () => {
      const r = await s.call('perseus_vault_forget', { ...identity, reason: 'superseded' });
      assert.deepEqual([r.found, r.category, r.key], [true, identity.category, identity.key]);
    });
    await check('errors: a missing argument is named as the Perseus client sends it',
      async () => {
        assert.match(await s.callError('perseus_vault_as_of', identity), /^as_of_unix_ms: /);
      });
    await s.finish(listedNames);
  } finally {
    await s.close().catch(() => {});
    dumpStderr(s);
  }
}

// ---------------------------------------------------------------------------------------------
// Progress: memories written without an embedder; then, with the built-in one, an embed call
// with onprogress must see notifications/progress before its result.

async function progressSessions(root) {
  const dir = path.join(root, 'progress');
  await mkdir(dir);
  const db = newStore(dir, 'sdk_progress').args;
  const writer = new Session('progress (writing)', [...db, '--embedder', 'none']);
  const wrote = await check(`progress: ${FILLER + TARGETS} memories written with --embedder none`,
    async () => {
      await withTimeout(writer.open(dir), REQUEST_TIMEOUT_MS, 'connect');
      await writer.listTools();
      const memory = (category, i) => ({ category, key: `${category}-${i}`,
        body: { text: `${category} note number ${i}` }, dedup: false });
      for (const [category, count] of [['filler', FILLER], ['target', TARGETS]]) {
        const items = Array.from({ length: count }, (_, i) => memory(category, i));
        const r = await writer.call('remember_batch', { items });
        assert.deepEqual([r.created, r.failed], [count, 0]);
      }
      const stats = await writer.call('stats', {});
      assert.equal(stats.embeddings, null, 'stats.embeddings is null without an embedder');
      assert.deepEqual(await writer.close(), { code: 0, signal: null });
      return true;
    });
  await writer.close().catch(() => {});
  if (!wrote) return;

  const s = new Session('progress', db);
  const opened = await check('progress: strata restarts on that file with the built-in embedder',
    async () => {
      await withTimeout(s.open(dir), REQUEST_TIMEOUT_MS, 'connect');
      await s.listTools();
      return true;
    });
  try {
    if (!opened) return;
    await check('progress: embed with onprogress gets notifications/progress up to its result',
      async () => {
        const updates = [];
        const r = await s.call('embed', { category: 'target', limit: 10000 },
          { timeout: EMBED_TIMEOUT_MS, onprogress: (update) => updates.push(update) });
        assert.ok(r.embedded > 0, 'a backlog: the background worker had not reached the '
          + `targets yet, so this call embedded them: ${JSON.stringify(r)}`);
        assert.deepEqual([r.failed, r.remaining], [0, 0]);
        const request = s.tap.sent.findLast((m) => m.method === 'tools/call');
        const token = request.params._meta?.progressToken;
        assert.notEqual(token, undefined, 'the SDK sent a progressToken');
        // As strata wrote them: each before the result, with the request's token.
        const answered = s.responseAt(request.id);
        const sent = s.tap.received.filter((m) => m.method === 'notifications/progress');
        assert.ok(sent.length >= 1, 'at least one progress notification');
        assert.ok(sent.every((m) => m.params.progressToken === token), 'with that token');
        assert.ok(sent.every((m) => s.tap.received.indexOf(m) < answered), 'before the result');
        let last = 0;
        for (const { params } of sent) {
          assert.ok(params.progress > last && params.progress <= params.total,
            JSON.stringify(sent));
          assert.equal(params.total, sent[0].params.total, 'one total');
          last = params.progress;
        }
        assert.deepEqual([last, sent[0].params.total], [r.embedded, r.embedded],
          'the last notification says all of them are done');
        // onprogress got them in order, but for those the SDK read with the result
        // (Session.sentBeforeItsResponse).
        assert.deepEqual(updates.map((u) => [u.progress, u.total]),
          sent.slice(0, updates.length).map((m) => [m.params.progress, m.params.total]));
        console.log(`# embed: ${sent.length} progress notifications for ${r.embedded} memories, `
          + `${updates.length} reached onprogress`);
      });
    await check('progress: without onprogress, no progressToken and no notifications',
      async () => {
        const before = s.tap.received.length;
        await s.call('embed', { category: 'filler', limit: 100 }, { timeout: EMBED_TIMEOUT_MS });
        const request = s.tap.sent.findLast((m) => m.method === 'tools/call');
        assert.equal(request.params._meta?.progressToken, undefined);
        assert.deepEqual(s.tap.received.slice(before).filter((m) => m.method !== undefined), []);
      });
    await check('progress: stats names the built-in embedder', async () => {
      const r = await s.call('stats', {});
      assert.match(r.embeddings?.embedder ?? '', /^builtin/);
      assert.equal(r.total_memories, FILLER + TARGETS);
    });
    await s.finish(['embed', 'stats'], 'embed and stats');
  } finally {
    await s.close().catch(() => {});
    dumpStderr(s);
  }
}

// ---------------------------------------------------------------------------------------------

async function main() {
  console.log(`# @modelcontextprotocol/sdk ${sdkVersion} on Node ${process.version}; `
    + `strata ${strataPath}`);
  await check('the installed SDK is the version pinned in package.json', () => {
    assert.equal(sdkVersion, pinned['@modelcontextprotocol/sdk']);
  });
  const root = await mkdtemp(path.join(os.tmpdir(), 'strata-sdk-client-'));
  const watchdog = setTimeout(() => {
    report(false, `everything within ${DEADLINE_MS / 1000} s (a request hung)`);
    for (const s of sessions) {
      try {
        if (s.transport?.pid) process.kill(s.transport.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
    rm(root, { recursive: true, force: true }).finally(() => process.exit(1));
  }, DEADLINE_MS);
  try {
    await canonicalSession(root);
    await perseusSession(root);
    await progressSessions(root);
  } finally {
    for (const s of [...sessions]) await s.close().catch(() => {});
    await rm(root, { recursive: true, force: true });
    clearTimeout(watchdog);
  }
  console.log(`# ${checks} checks, ${failures} failed`);
  process.exit(failures ? 1 : 0);
}

await main();
