// A real MCP client over HTTP: the official TypeScript SDK's StreamableHTTPClientTransport
// against `strata serve --http 127.0.0.1:0 --auth-token-file FILE` (docs/protocol.md, "The
// HTTP transport"). Checks the handshake and session id, tools/list, a write and a recall,
// progress over server-sent events, a workspace-restricted token's tool error, DELETE of the
// session, and that SIGTERM ends the server with status 0.
// With STRATA_TEST_STORE=postgresql the store is a new database (stores.mjs), and the writes
// are checked to be its rows.
//
// Run: node tests/client/sdk_http_client.mjs <path-to-strata>   (after `npm ci` in tests/client)
// Prints one `ok - ...` / `not ok - ...` line per check and exits 1 if any failed. Exits 77
// (a skip, for Meson) when the SDK is not installed, unless CI is set: then that fails.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

import { ON_POSTGRES, newStore, psql } from './stores.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
// Bounds against a hung server, never expectations about speed.
const START_TIMEOUT_MS = 30_000;
const DEADLINE_MS = 240_000;
const ADMIN_TOKEN = 'sdk-admin-token-0123456789';
const TEAM_TOKEN = 'sdk-team-token-0123456789';

let checks = 0;
let failures = 0;

async function check(description, body) {
  checks += 1;
  try {
    const value = await body();
    console.log(`ok - ${description}`);
    return value;
  } catch (error) {
    failures += 1;
    console.log(`not ok - ${description}`);
    console.log(String(error?.stack ?? error).replace(/^/gm, '#   '));
    return undefined;
  }
}

const strataPath = process.argv[2];
if (!strataPath) {
  console.error('usage: node sdk_http_client.mjs <path-to-strata>');
  process.exit(2);
}
if (!existsSync(path.join(HERE, 'node_modules', '@modelcontextprotocol', 'sdk'))) {
  const why = 'the MCP SDK is not installed: run `npm ci` in tests/client (tools/test does)';
  if (process.env.CI) {
    console.log(`not ok - ${why}`);
    process.exit(1);
  }
  console.log(`# skip: ${why}`);
  process.exit(77);
}
const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } =
  await import('@modelcontextprotocol/sdk/client/streamableHttp.js');

// Starts the server; resolves with { child, url, db, stderr() } once it names its port.
async function startServer(dir) {
  const tokens = path.join(dir, 'tokens');
  await writeFile(tokens, `# sdk test\n${ADMIN_TOKEN}\n${TEAM_TOKEN} team-a\n`);
  const store = newStore(dir, 'sdk_http');
  const child = spawn(strataPath, ['serve', '--http', '127.0.0.1:0', ...store.args,
    '--auth-token-file', tokens],
  { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no start line: ${stderr}`)), START_TIMEOUT_MS);
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      const m = /serving MCP over HTTP at (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(stderr);
      if (m) {
        clearTimeout(timer);
        resolve(new URL(m[1]));
      }
    });
    child.on('exit', () => reject(new Error(`server exited: ${stderr}`)));
  });
  return { child, url, exited, db: store.db, stderr: () => stderr };
}

async function connect(url, token) {
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: 'strata-sdk-http-test', version: '1.0.0' });
  await client.connect(transport);
  // Every message as it came off the wire, before the SDK handles it.
  const received = [];
  const handle = transport.onmessage;
  transport.onmessage = (message, extra) => {
    received.push(message);
    handle(message, extra);
  };
  return { client, transport, received };
}

async function main() {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'strata-sdk-http-'));
  const watchdog = setTimeout(() => {
    console.log(`not ok - everything within ${DEADLINE_MS / 1000} s (a request hung)`);
    process.exit(1);
  }, DEADLINE_MS);
  let server;
  try {
    server = await check('the server starts and names its port', () => startServer(dir));
    if (!server) return;
    const admin = await check('the SDK connects with a bearer token and gets a session id',
      async () => {
        const c = await connect(server.url, ADMIN_TOKEN);
        assert.match(c.transport.sessionId ?? '', /^[0-9a-f]{32}$/);
        return c;
      });
    if (!admin) return;
    await check('tools/list', async () => {
      const { tools } = await admin.client.listTools();
      assert.ok(tools.some((t) => t.name === 'remember'));
      assert.ok(tools.some((t) => t.name === 'recall'));
    });
    await check('remember then recall', async () => {
      const written = await admin.client.callTool({ name: 'remember', arguments: {
        category: 'notes', key: 'http', body: 'strata speaks streamable HTTP', workspace: 'team-a' } });
      assert.equal(written.isError, false, JSON.stringify(written));
      const found = await admin.client.callTool({ name: 'recall',
        arguments: { query: 'streamable', workspace: 'team-a' } });
      assert.deepEqual(found.structuredContent.items.map((i) => i.key), ['http']);
    });
    await check('progress over server-sent events', async () => {
      const updates = [];
      const items = Array.from({ length: 100 }, (_, i) => ({
        category: 'batch', key: `k${i}`, body: `note number ${i}` }));
      const before = admin.received.length;
      const r = await admin.client.callTool({ name: 'remember_batch', arguments: { items } },
        undefined, { onprogress: (u) => updates.push(u) });
      assert.equal(r.structuredContent.created, 100);
      // As the stream brought them, before the result. The SDK hands a notification to
      // onprogress a turn after reading it and drops those it read with the result
      // (typescript-sdk issue 2580), so onprogress may have fewer: the first ones.
      const stream = admin.received.slice(before);
      const answered = stream.findIndex((m) => m.method === undefined && m.result);
      const sent = stream.slice(0, answered).filter((m) => m.method === 'notifications/progress');
      assert.ok(sent.length >= 1, 'at least one progress notification before the result');
      assert.deepEqual([sent.at(-1).params.progress, sent.at(-1).params.total], [100, 100]);
      assert.deepEqual(updates.map((u) => u.progress),
        sent.slice(0, updates.length).map((m) => m.params.progress));
    });
    if (ON_POSTGRES) {
      await check('the writes are rows of the PostgreSQL database', async () => {
        assert.equal(psql(server.db, "SELECT count(*) FROM memories WHERE workspace = 'team-a'"),
          '1');
        assert.equal(psql(server.db, "SELECT count(*) FROM memories WHERE category = 'batch'"),
          '100');
      });
    }
    await check('a restricted token gets a tool error for another workspace', async () => {
      const team = await connect(server.url, TEAM_TOKEN);
      try {
        const r = await team.client.callTool({ name: 'get',
          arguments: { category: 'notes', key: 'http', workspace: 'team-b' } });
        assert.equal(r.isError, true, JSON.stringify(r));
        assert.match(r.content[0].text, /may not use workspace "team-b"/);
        const own = await team.client.callTool({ name: 'get',
          arguments: { category: 'notes', key: 'http', workspace: 'team-a' } });
        assert.equal(own.structuredContent.found, true);
      } finally {
        await team.transport.terminateSession();
        await team.client.close();
      }
    });
    await check('a wrong token is refused', async () => {
      await assert.rejects(connect(server.url, 'not-a-token-0123456789'));
    });
    await check('terminateSession ends the session (DELETE)', async () => {
      await admin.transport.terminateSession();
      assert.equal(admin.transport.sessionId, undefined);
      await admin.client.close();
    });
    await check('SIGTERM: the server exits 0', async () => {
      server.child.kill('SIGTERM');
      const { code } = await server.exited;
      assert.equal(code, 0, server.stderr());
    });
  } finally {
    if (server && server.child.exitCode === null && server.child.signalCode === null) {
      server.child.kill('SIGKILL');
    }
    clearTimeout(watchdog);
    await rm(dir, { recursive: true, force: true });
  }
  console.log(`# ${checks} checks, ${failures} failed`);
  process.exit(failures ? 1 : 0);
}

await main();
