#!/usr/bin/env bash
# How busy the change lock is during a load: samples pg_locks every ~2 ms (4,000 samples, from
# a PL/pgSQL loop in the server) for the advisory lock every write transaction holds
# (pg::kChangeLock, read from src/pg/schema.h; pg_locks shows a bigint key as its high 32 bits,
# classid, and its low 32, objid), and prints the
# share of samples in which a transaction held it and how many waited for it on average.
# Usage, beside a load: benchmark/nodes/sample_change_lock.sh [SECONDS]  (default 20)
# It finds the cluster from a running `strata serve --http ... --store postgresql://...` (as
# run.py starts them) and waits SECONDS before sampling. The sampler takes some CPU itself.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
lock=$(grep -o 'kChangeLock = 0x[0-9a-fA-F]*' "$root/src/pg/schema.h" | cut -d' ' -f3)
[ -n "$lock" ] || { echo "no kChangeLock in src/pg/schema.h" >&2; exit 1; }
classid=$(( lock >> 32 ))
objid=$(( lock & 0xffffffff ))
uri=""
for _ in $(seq 1 120); do
  uri=$(pgrep -a -f "serve --http" | grep -o "postgresql:///strata?host=[^ ]*" | head -1 || true)
  [ -n "$uri" ] && break
  sleep 1
done
[ -n "$uri" ] || { echo "no strata node serving a PostgreSQL store" >&2; exit 1; }
sleep "${1:-20}"
host=$(sed 's/.*host=\([^&]*\).*/\1/' <<<"$uri")
port=$(sed 's/.*port=\([0-9]*\).*/\1/' <<<"$uri")
psql -h "$host" -p "$port" -U postgres -d strata -X -q <<SQL
DO \$\$
DECLARE held int := 0; waiting int := 0; n int := 0; h bool; w int;
BEGIN
  FOR i IN 1..4000 LOOP
    SELECT count(*) FILTER (WHERE granted) > 0, count(*) FILTER (WHERE NOT granted)
      INTO h, w FROM pg_locks
      WHERE locktype = 'advisory' AND classid = $classid AND objid = $objid;
    n := n + 1;
    IF h THEN held := held + 1; END IF;
    waiting := waiting + w;
    PERFORM pg_sleep(0.002);
  END LOOP;
  RAISE NOTICE 'change lock: held in % of % samples (% %%), % waiting on average',
    held, n, round(100.0 * held / n, 1), round(waiting::numeric / n, 2);
END \$\$;
SQL
