/*
 * The time SQLite takes to run a query once: prepare, step through every
 * row, and read every column (type, then value or bytes), through the C
 * API and nothing else. The baseline of `watch-latency.py --baseline`.
 *
 *     cc -O2 -o sqlite-scan Benchmarks/Tools/sqlite-scan.c -lsqlite3
 *     ./sqlite-scan DATABASE QUERY RUNS
 *
 * Prints one line per run: milliseconds and rows.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ms(void) {
    struct timespec time;
    clock_gettime(CLOCK_MONOTONIC, &time);
    return time.tv_sec * 1e3 + time.tv_nsec / 1e6;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: sqlite-scan DATABASE QUERY RUNS\n");
        return 2;
    }
    sqlite3 *db;
    if (sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        fprintf(stderr, "sqlite-scan: %s\n", sqlite3_errmsg(db));
        return 1;
    }
    int runs = atoi(argv[3]);
    /* Anything the reads compute goes here, so that they are not optimized away. */
    unsigned long long checksum = 0;
    for (int run = 0; run < runs; run++) {
        double start = now_ms();
        sqlite3_stmt *statement;
        if (sqlite3_prepare_v2(db, argv[2], -1, &statement, NULL) != SQLITE_OK) {
            fprintf(stderr, "sqlite-scan: %s\n", sqlite3_errmsg(db));
            return 1;
        }
        long rows = 0;
        int code;
        while ((code = sqlite3_step(statement)) == SQLITE_ROW) {
            int count = sqlite3_column_count(statement);
            for (int column = 0; column < count; column++) {
                switch (sqlite3_column_type(statement, column)) {
                case SQLITE_INTEGER: checksum += (unsigned long long)sqlite3_column_int64(statement, column); break;
                case SQLITE_FLOAT: checksum += (unsigned long long)sqlite3_column_double(statement, column); break;
                case SQLITE_TEXT: {
                    const unsigned char *text = sqlite3_column_text(statement, column);
                    int bytes = sqlite3_column_bytes(statement, column);
                    checksum += bytes > 0 ? text[bytes - 1] : 0;
                    break;
                }
                case SQLITE_BLOB: {
                    const unsigned char *blob = sqlite3_column_blob(statement, column);
                    int bytes = sqlite3_column_bytes(statement, column);
                    checksum += bytes > 0 ? blob[bytes - 1] : 0;
                    break;
                }
                default: break;
                }
            }
            rows++;
        }
        if (code != SQLITE_DONE) {
            fprintf(stderr, "sqlite-scan: %s\n", sqlite3_errmsg(db));
            return 1;
        }
        sqlite3_finalize(statement);
        printf("%.3f %ld\n", now_ms() - start, rows);
    }
    fprintf(stderr, "checksum %llu\n", checksum);
    sqlite3_close(db);
    return 0;
}
