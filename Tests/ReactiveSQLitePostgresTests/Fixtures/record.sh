#!/usr/bin/env bash
# Records the pgoutput fixtures that PgOutputDecoderTests decodes, from a real
# PostgreSQL 15 server.
#
# Usage (as root, or as the postgres user):
#
#     Tests/ReactiveSQLitePostgresTests/Fixtures/record.sh
#
# It creates a throwaway cluster (initdb in $PG_WORK/data, trust
# authentication, wal_level=logical, TimeZone UTC so that timestamptz values
# read the same everywhere), starts it on 127.0.0.1:$PG_PORT, records every
# scenario, and stops the cluster when it ends (even on failure). PostgreSQL
# refuses to run as root: as root, the server commands run through
# `runuser -u postgres`, in a folder the postgres user owns.
#
# Each scenario:
#   1. runs its setup SQL (tables, rows that exist before decoding starts),
#   2. creates the logical replication slot `slot` (plugin pgoutput), so that
#      only what follows is decoded,
#   3. runs its changes SQL,
#   4. reads the slot with
#        SELECT encode(data, 'hex') FROM pg_logical_slot_peek_binary_changes(
#            'slot', NULL, NULL, 'proto_version', '1', 'publication_names', 'pub'
#            [, extra options])
#      and writes `<scenario>.txt` next to this script: `#` lines saying which
#      SQL produced it, then one message per line, in hexadecimal,
#   5. drops the slot and the scenario's tables.
#
# The publication `pub` is FOR ALL TABLES. PostgreSQL 15 does not flush the
# WAL after a non-transactional logical message, and decoding reads flushed
# WAL only: the message scenario commits one more transaction after it. Commit timestamps, LSNs and
# transaction ids change from one recording to the next; the tests do not
# depend on their values, only on their order.
#
# Environment:
#   PG_BIN   PostgreSQL 15's binaries (default /usr/lib/postgresql/15/bin)
#   PG_PORT  the port of the throwaway server (default 55499)
#   PG_WORK  the folder of the throwaway cluster, removed first (default /tmp/pgfix)

set -euo pipefail

PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
PG_PORT=${PG_PORT:-55499}
PG_WORK=${PG_WORK:-/tmp/pgfix}
FIXTURES=$(cd "$(dirname "$0")" && pwd)

# Runs a command as the postgres user (directly when we are that user).
as_postgres() {
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

# Runs SQL read from standard input, stopping at the first error; prints
# unaligned tuples only.
psql_run() {
    PGOPTIONS="-c client_min_messages=warning" "$PG_BIN/psql" -X -q -At -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres "$@"
}

stop_server() {
    as_postgres "$PG_BIN/pg_ctl" -D "$PG_WORK/data" -m fast stop >/dev/null 2>&1 || true
}

rm -rf "$PG_WORK"
mkdir -p "$PG_WORK"
if [ "$(id -u)" -eq 0 ]; then chown postgres "$PG_WORK"; fi
as_postgres "$PG_BIN/initdb" -D "$PG_WORK/data" -A trust -U postgres -E UTF8 --locale=C >/dev/null
trap stop_server EXIT
as_postgres "$PG_BIN/pg_ctl" -D "$PG_WORK/data" -w -l "$PG_WORK/log" \
    -o "-p $PG_PORT -k $PG_WORK -c listen_addresses=127.0.0.1 -c wal_level=logical -c TimeZone=UTC" start >/dev/null

psql_run <<<"CREATE PUBLICATION pub FOR ALL TABLES;"

# record NAME EXTRA_OPTIONS SETUP_SQL CHANGES_SQL
# EXTRA_OPTIONS: more options of pg_logical_slot_peek_binary_changes, as SQL
# (", 'binary', 'true'"), or empty.
record() {
    local name=$1 options=$2 setup=$3 changes=$4
    local file="$FIXTURES/$name.txt"
    psql_run <<<"$setup" >/dev/null
    psql_run <<<"SELECT pg_create_logical_replication_slot('slot', 'pgoutput');" >/dev/null
    psql_run <<<"$changes" >/dev/null
    {
        echo "# Recorded from PostgreSQL $(psql_run <<<"SHOW server_version;") by record.sh."
        echo "# Options: 'proto_version', '1', 'publication_names', 'pub'$options"
        echo "# Setup (before the slot):"
        sed 's/^/#     /' <<<"$setup"
        echo "# Changes (decoded):"
        sed 's/^/#     /' <<<"$changes"
        psql_run <<<"SELECT encode(data, 'hex') FROM pg_logical_slot_peek_binary_changes(
            'slot', NULL, NULL, 'proto_version', '1', 'publication_names', 'pub'$options);"
    } >"$file"
    psql_run <<<"SELECT pg_drop_replication_slot('slot');" >/dev/null
    psql_run <<<"DROP TABLE IF EXISTS player, team, membership, audit, toasted, typed, badge CASCADE;
        DROP TYPE IF EXISTS mood;"
    echo "recorded $name.txt"
}

PLAYER="CREATE TABLE player (id integer PRIMARY KEY, name text NOT NULL, score integer);"

record insert "" \
"$PLAYER" \
"INSERT INTO player VALUES (1, 'Arthur', 10), (2, 'Barbara', NULL);
INSERT INTO player VALUES (3, 'Craig', 30);"

record update "" \
"$PLAYER
INSERT INTO player VALUES (1, 'Arthur', 10);" \
"UPDATE player SET score = 11 WHERE id = 1;"

record update-key "" \
"CREATE TABLE membership (team_id integer, player_id integer, role text, PRIMARY KEY (team_id, player_id));
INSERT INTO membership VALUES (1, 1, 'captain');" \
"UPDATE membership SET player_id = 2, role = 'coach' WHERE team_id = 1 AND player_id = 1;"

record replica-identity-full "" \
"CREATE TABLE audit (id integer, note text, amount bigint);
ALTER TABLE audit REPLICA IDENTITY FULL;
INSERT INTO audit VALUES (1, 'first', 100), (2, NULL, 200);" \
"UPDATE audit SET note = 'changed' WHERE id = 1;
DELETE FROM audit WHERE id = 2;"

record replica-identity-index "" \
"CREATE TABLE badge (id integer PRIMARY KEY, code text NOT NULL, label text);
CREATE UNIQUE INDEX badge_code ON badge (code);
ALTER TABLE badge REPLICA IDENTITY USING INDEX badge_code;
INSERT INTO badge VALUES (1, 'gold', 'Gold');" \
"UPDATE badge SET code = 'GOLD' WHERE id = 1;
DELETE FROM badge WHERE id = 1;"

record delete "" \
"$PLAYER
INSERT INTO player VALUES (1, 'Arthur', 10), (2, 'Barbara', 20);" \
"DELETE FROM player WHERE id = 2;"

record truncate "" \
"$PLAYER
CREATE TABLE team (id serial PRIMARY KEY, name text);
INSERT INTO player VALUES (1, 'Arthur', 10);
INSERT INTO team (name) VALUES ('Reds');" \
"TRUNCATE player, team RESTART IDENTITY CASCADE;
TRUNCATE team;"

record enum-type "" \
"CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
$PLAYER
ALTER TABLE player ADD COLUMN mood mood;" \
"INSERT INTO player VALUES (1, 'Arthur', 10, 'happy');"

TYPED="CREATE TABLE typed (
    id integer PRIMARY KEY,
    small smallint, regular integer, big bigint,
    txt text, var varchar(20), num numeric, num_scaled numeric(12, 3), flag boolean, data bytea,
    ts timestamp, tstz timestamptz);"
TYPED_ROWS="INSERT INTO typed VALUES
    (1, -32768, 2147483647, -9223372036854775808,
     'héllo, wörld ✓', 'varchar', 123456789012345678901234567890.123456789012345678901234567890, -0.5, true,
     '\\x00ff10'::bytea, '2024-02-29 13:45:30.123456', '2024-02-29 13:45:30.5+02');
INSERT INTO typed VALUES (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO typed (id, txt, num, flag, data) VALUES (3, '', 'NaN', false, ''::bytea);"

record types "" "$TYPED" "$TYPED_ROWS"

record binary ", 'binary', 'true'" "$TYPED" "$TYPED_ROWS"

record toast "" \
"CREATE TABLE toasted (id integer PRIMARY KEY, counter integer, body text);
ALTER TABLE toasted ALTER COLUMN body SET STORAGE EXTERNAL;
INSERT INTO toasted VALUES (1, 0, repeat(md5(random()::text), 200));" \
"UPDATE toasted SET counter = counter + 1 WHERE id = 1;"

record message ", 'messages', 'true'" \
"$PLAYER" \
"BEGIN;
INSERT INTO player VALUES (1, 'Arthur', 10);
SELECT pg_logical_emit_message(true, 'reactive', 'in a transaction');
COMMIT;
SELECT pg_logical_emit_message(false, 'reactive.raw', '\\x00ff0a'::bytea);
INSERT INTO player VALUES (2, 'Barbara', 20);"

record origin "" \
"$PLAYER
SELECT pg_replication_origin_create('upstream');" \
"SELECT pg_replication_origin_session_setup('upstream');
BEGIN;
SELECT pg_replication_origin_xact_setup('0/12345678', '2024-01-01 00:00:00+00');
INSERT INTO player VALUES (1, 'Arthur', 10);
COMMIT;
SELECT pg_replication_origin_session_reset();"
