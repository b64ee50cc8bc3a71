/*
 * jobrunner plugin ABI, version 1.
 *
 * A plugin is a shared library named lib<name>.so that exports one function:
 *
 *     const jobrunner_plugin_descriptor *jobrunner_plugin_v1(void);
 *
 * jobrunner loads the library with dlopen (once; it is never unloaded), calls that function once
 * and keeps the pointer it returns: the descriptor and every string it points to must stay valid
 * and unchanged for the life of the process. Only C data crosses this boundary: strings are
 * NUL-terminated UTF-8, requests and responses are JSON documents passed as (pointer, length).
 * Whoever allocates a buffer frees it: jobrunner owns requests, the plugin owns responses and
 * gives them back to `free_response`.
 *
 * Requests (what `invoke` receives), a JSON object:
 *
 *     {
 *       "handler": "refresh",              the handler's name, as in the descriptor
 *       "job": "users-refresh",            the job's id
 *       "run": "20261122T101500.000Z-1a2b",
 *       "attempt": 1,                      counts from 1
 *       "parameters": { ... },             the job's `with:` map, as written (JSON types)
 *       "needs": { "job-id": { "key": "value" } },   outputs of the jobs this one needs
 *       "log": "/path/to/attempt.log",     append text here to write to the attempt's log; its
 *                                          directories may not exist yet: create them first
 *       "workdir": "/path/to/dir"          the job's working directory
 *     }
 *
 * Responses (what `invoke` returns), a JSON object:
 *
 *     {
 *       "status": "succeeded" | "failed" | "retry" | "skipped",
 *       "message": "why, for status and events",     optional
 *       "retryAfter": 30.0,                seconds; with "retry": replaces the backoff (optional)
 *       "outputs": { "key": "value" }      string values; optional
 *     }
 *
 * "failed" and "retry" both end the attempt as failed; the job's retry policy decides whether
 * another attempt comes, exactly as for a shell job that exits non-zero (with "retryAfter",
 * as for `retry-after=` in the control file). "skipped" is like `skip=` in the control file.
 * A response jobrunner cannot parse fails the attempt with a reason that says so.
 *
 * `invoke` is called on a thread of jobrunner's that may block; several calls may run at once
 * on different threads, so a handler must be thread-safe. With `isolation: process` the same
 * call happens in a persistent worker process (a few per plugin, one call at a time each, whose
 * globals persist from call to call); with `isolation: process-per-attempt`, in a child
 * jobrunner process of its own per attempt.
 */
#ifndef JOBRUNNER_PLUGIN_H
#define JOBRUNNER_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI version this header describes; a descriptor must carry it in `abi_version`. */
#define JOBRUNNER_PLUGIN_ABI_VERSION 1

/* The name of the one exported symbol, for dlsym. */
#define JOBRUNNER_PLUGIN_SYMBOL "jobrunner_plugin_v1"

typedef struct jobrunner_plugin_descriptor {
    /* Must be JOBRUNNER_PLUGIN_ABI_VERSION. */
    uint32_t abi_version;
    /* The plugin's name: jobs name its handlers `<name>.<handler>`; should match lib<name>.so. */
    const char *name;
    /* The plugin's own version, free-form (e.g. "1.2.0"); shown by `jobrunner plugins`. */
    const char *version;
    /* For plugins written in Swift: the Swift compiler version they were built with, as
       "MAJOR.MINOR" (jobrunner refuses a mismatch, as Swift has no stable ABI on Linux).
       NULL for plugins written in C or another language. */
    const char *swift_version;
    /* The handlers this plugin offers, `handler_count` names. */
    size_t handler_count;
    const char *const *handlers;
    /* Passed back unchanged as the first argument of the functions below. */
    void *context;
    /* Runs one attempt: `handler` is one of `handlers`; the request is `request_length` bytes
       of JSON (not NUL-terminated). Returns the response JSON and stores its length in
       `*response_length`; the buffer is the plugin's, handed back to `free_response`. Must not
       return NULL. */
    char *(*invoke)(void *context, const char *handler, const char *request, size_t request_length,
                    size_t *response_length);
    /* Checks a job's `with:` parameters before anything runs (`parameters` is the JSON of the
       map). Returns NULL when they are acceptable, else a NUL-terminated message saying what is
       wrong, which jobrunner hands back to `free_response`. May itself be NULL: no check.
       Each line of the message is one problem; a line that begins `unknown parameter 'KEY'`
       is reported at KEY's line of the job file (the Swift API says so for every key of
       `with:` that a handler's Parameters does not read). */
    char *(*check_parameters)(void *context, const char *handler, const char *parameters,
                              size_t parameters_length);
    /* Frees what `invoke` or `check_parameters` returned. */
    void (*free_response)(void *context, char *response);
} jobrunner_plugin_descriptor;

/* Every plugin defines this function (with C linkage) and exports it. */
typedef const jobrunner_plugin_descriptor *(*jobrunner_plugin_entry)(void);

#ifdef __cplusplus
}
#endif

#endif /* JOBRUNNER_PLUGIN_H */
