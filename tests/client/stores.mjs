// The store a client test runs on: a SQLite file, or with STRATA_TEST_STORE=postgresql a new
// database on the cluster whose URI tests/pg/with_cluster passes in STRATA_TEST_PG_URI (as
// tests/e2e/mcp_client.py does).

import { execFileSync } from 'node:child_process';
import path from 'node:path';
import process from 'node:process';

export const ON_POSTGRES = process.env.STRATA_TEST_STORE === 'postgresql';
const PSQL = path.join(process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin', 'psql');

// Runs `sql` on the database `uri` names; returns psql's unaligned, headerless output.
export function psql(uri, sql) {
  return execFileSync(PSQL, ['-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1', uri, '-c', sql],
    { encoding: 'utf8' }).trim();
}

// A new store for `label` (letters, digits and '_'): the file memory.db in `dir` (--db), or a
// new database on the test cluster (--store, as an operator names one, with the node's vector
// index in `dir`). Returns its path or URI and the arguments that name it ({ db, args }).
export function newStore(dir, label) {
  if (!ON_POSTGRES) {
    const db = path.join(dir, 'memory.db');
    return { db, args: ['--db', db] };
  }
  const base = process.env.STRATA_TEST_PG_URI;
  if (!base) throw new Error('STRATA_TEST_PG_URI is unset: run through tests/pg/with_cluster');
  const name = `${label}_${process.pid}`;
  psql(base, `CREATE DATABASE ${name}`);
  const db = `${base}&dbname=${name}`;
  return { db, args: ['--store', db, '--index-dir', path.join(dir, 'index')] };
}
