// A plugin written in C, from jobrunner_plugin.h alone: `hello.greet` succeeds with an output
// and a line in the attempt's log; `hello.fail` fails with a message.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "jobrunner_plugin.h"

// Copies `text` into a malloc'd buffer, as invoke's responses must be (freed by free_response).
static char *copy(const char *text, size_t *length) {
    size_t size = strlen(text);
    char *buffer = malloc(size + 1);
    if (buffer == NULL) return NULL;
    memcpy(buffer, text, size + 1);
    if (length != NULL) *length = size;
    return buffer;
}

// The value of a top-level string field of the request, like "log" (no escapes in paths here:
// a C plugin that needs more parses the request with a JSON library).
static int string_field(const char *json, size_t length, const char *name, char *out, size_t out_size) {
    char key[64];
    snprintf(key, sizeof key, "\"%s\":\"", name);
    const char *end = json + length;
    size_t key_length = strlen(key);
    for (const char *p = json; p + key_length <= end; p++) {
        if (memcmp(p, key, key_length) != 0) continue;
        const char *start = p + key_length;
        const char *stop = memchr(start, '"', (size_t)(end - start));
        if (stop == NULL || (size_t)(stop - start) >= out_size) return 0;
        memcpy(out, start, (size_t)(stop - start));
        out[stop - start] = '\0';
        return 1;
    }
    return 0;
}

static char *invoke(void *context, const char *handler, const char *request, size_t request_length,
                    size_t *response_length) {
    (void)context;
    if (strcmp(handler, "greet") == 0) {
        char log_path[4096];
        char job[256] = "?";
        string_field(request, request_length, "job", job, sizeof job);
        if (string_field(request, request_length, "log", log_path, sizeof log_path)) {
            FILE *log = fopen(log_path, "a");
            if (log == NULL) {
                // The log's directories may not exist yet: make each, then try again.
                for (char *slash = strchr(log_path + 1, '/'); slash != NULL; slash = strchr(slash + 1, '/')) {
                    *slash = '\0';
                    mkdir(log_path, 0755);
                    *slash = '/';
                }
                log = fopen(log_path, "a");
            }
            if (log != NULL) {
                fprintf(log, "hello from C, job %s\n", job);
                fclose(log);
            }
        }
        return copy("{\"status\":\"succeeded\",\"outputs\":{\"greeting\":\"hello from C\"}}", response_length);
    }
    if (strcmp(handler, "fail") == 0) {
        return copy("{\"status\":\"failed\",\"message\":\"hello.fail always fails\"}", response_length);
    }
    return copy("{\"status\":\"failed\",\"message\":\"unknown handler\"}", response_length);
}

static void free_response(void *context, char *response) {
    (void)context;
    free(response);
}

static const char *const handlers[] = {"greet", "fail"};

static const jobrunner_plugin_descriptor descriptor = {
    .abi_version = JOBRUNNER_PLUGIN_ABI_VERSION,
    .name = "hello",
    .version = "1.0.0",
    .swift_version = NULL,
    .handler_count = 2,
    .handlers = handlers,
    .context = NULL,
    .invoke = invoke,
    .check_parameters = NULL,
    .free_response = free_response,
};

__attribute__((visibility("default"))) const jobrunner_plugin_descriptor *jobrunner_plugin_v1(void) {
    return &descriptor;
}
