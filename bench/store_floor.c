/* The store's floor: the commits a chained run makes, made by LMDB alone.
 *
 * A run of chained jobs in L lanes commits once per step of its lanes: each commit stores the
 * end of every lane's job (its job row and its attempt row) and the start of the job after it
 * (a job row and a new attempt row). This program makes exactly those commits with the LMDB
 * library jobrunner links (Debian's liblmdb), into a database laid out as jobrunner's is (tables
 * `jobs` and `attempts`, keys `run \0 job \0` and `run \0 job \0 \0 attempt`, rows of the same
 * sizes), with LMDB's default durable commits (data pages flushed, then the meta page), and no
 * scheduler, no plugin call, no thread hand-off: no runner that stores each transition in LMDB
 * before it acts on it can go faster on this disk.
 *
 * Usage: store_floor DIRECTORY JOBS LANES CHAIN_LENGTH [nometasync]
 * Prints: SECONDS COMMITS (the timed part: every commit after the run's opening).
 *
 * With `nometasync` the environment is opened with MDB_NOMETASYNC, as jobrunner opens its own:
 * each commit flushes its data pages, and its meta page goes to disk with the next commit's
 * flush (docs/architecture.md, "Durability and group commit").
 */
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RUN "20261124T114234.569Z-3e4a"

static void check(int rc, const char *what) {
    if (rc != 0) {
        fprintf(stderr, "store_floor: %s: %s\n", what, mdb_strerror(rc));
        exit(1);
    }
}

static size_t job_key(char *key, int job) {
    int length = snprintf(key, 64, RUN "_job-%d_", job);
    key[sizeof(RUN) - 1] = 0;
    key[length - 1] = 0;
    return (size_t)length;
}

static void put(MDB_txn *txn, MDB_dbi table, char *key, size_t key_length, const char *row) {
    MDB_val k = {key_length, key}, v = {strlen(row), (void *)row};
    check(mdb_put(txn, table, &k, &v, 0), "mdb_put");
}

/* A job's end (ended != 0) or start: its job row and its attempt row. */
static void transition(MDB_txn *txn, MDB_dbi jobs, MDB_dbi attempts, int job, int ended) {
    char key[80], row[320];
    size_t length = job_key(key, job);
    snprintf(row, sizeof row,
             "{\"jobID\":\"job-%d\",\"pipeline\":\"p\",\"maxAttempts\":1,\"state\":\"%s\",\"attempts\":1,"
             "\"firstStartedAt\":817213354.81974,\"startedAt\":817213354.81974%s}",
             job, ended ? "succeeded" : "running", ended ? ",\"finishedAt\":817213354.8214568" : "");
    put(txn, jobs, key, length, row);
    memset(key + length, 0, 8);
    key[length + 8] = 1;
    snprintf(row, sizeof row,
             "{\"jobID\":\"job-%d\",\"occurrence\":\"\",\"number\":1%s,\"startedAt\":817213354.81974,"
             "\"logPath\":\"logs/" RUN "/job-%d/1.log\"}",
             job, ended ? ",\"outcome\":\"succeeded\",\"finishedAt\":817213354.8214568" : "", job);
    put(txn, attempts, key, length + 9, row);
}

int main(int argc, char **argv) {
    if (argc != 5 && !(argc == 6 && strcmp(argv[5], "nometasync") == 0)) {
        fprintf(stderr, "usage: store_floor DIRECTORY JOBS LANES CHAIN_LENGTH [nometasync]\n");
        return 2;
    }
    const char *directory = argv[1];
    int jobs = atoi(argv[2]), lanes = atoi(argv[3]), chain_length = atoi(argv[4]);
    if (jobs <= 0 || lanes <= 0 || chain_length <= 0 || jobs % chain_length != 0) {
        fprintf(stderr, "store_floor: JOBS must be a positive multiple of CHAIN_LENGTH\n");
        return 2;
    }
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi jobs_table, attempts_table;
    check(mdb_env_create(&env), "mdb_env_create");
    check(mdb_env_set_mapsize(env, (size_t)8 << 30), "mdb_env_set_mapsize");
    check(mdb_env_set_maxdbs(env, 8), "mdb_env_set_maxdbs");
    unsigned int flags = MDB_NOTLS | (argc == 6 ? MDB_NOMETASYNC : 0);
    check(mdb_env_open(env, directory, flags, 0600), "mdb_env_open");
    check(mdb_txn_begin(env, NULL, 0, &txn), "mdb_txn_begin");
    check(mdb_dbi_open(txn, "jobs", MDB_CREATE, &jobs_table), "mdb_dbi_open");
    check(mdb_dbi_open(txn, "attempts", MDB_CREATE, &attempts_table), "mdb_dbi_open");
    /* The run's opening, not timed: every job's row, pending. */
    for (int job = 0; job < jobs; job++) {
        char key[80], row[160];
        size_t length = job_key(key, job);
        snprintf(row, sizeof row, "{\"jobID\":\"job-%d\",\"pipeline\":\"p\",\"needs\":[\"job-%d\"]}", job, job - 1);
        put(txn, jobs_table, key, length, row);
    }
    check(mdb_txn_commit(txn), "mdb_txn_commit");

    /* Lane l runs chains l, l + lanes, ...: its jobs in order, a step per commit. */
    int chains = jobs / chain_length;
    int steps = ((chains + lanes - 1) / lanes) * chain_length;
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    int commits = 0;
    for (int step = 0; step <= steps; step++) {
        check(mdb_txn_begin(env, NULL, 0, &txn), "mdb_txn_begin");
        for (int lane = 0; lane < lanes; lane++) {
            for (int which = 0; which < 2; which++) {
                int position = step - 1 + which; /* the job that ends, then the one that starts */
                if (position < 0) continue;
                int chain = (position / chain_length) * lanes + lane;
                if (chain >= chains) continue;
                int job = chain * chain_length + position % chain_length;
                transition(txn, jobs_table, attempts_table, job, which == 0);
            }
        }
        check(mdb_txn_commit(txn), "mdb_txn_commit");
        commits++;
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    printf("%.6f %d\n", (double)(end.tv_sec - start.tv_sec) + (end.tv_nsec - start.tv_nsec) / 1e9, commits);
    mdb_env_close(env);
    return 0;
}
