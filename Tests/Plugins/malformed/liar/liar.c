// A test plugin whose descriptor is sound but whose answers lie about their lengths:
// `liar.huge` reports a 1 TiB response for a 2-byte buffer, `liar.enormous` one of 2^63 bytes
// (more than a signed length holds), and the parameter check of
// `liar.unterminated` returns a message with no NUL in its 128 KiB. jobrunner must refuse both
// without reading past the buffers. `liar.ok` behaves.
#include <stdlib.h>
#include <string.h>

#include "jobrunner_plugin.h"

static char *copy(const char *text, size_t *length) {
    *length = strlen(text);
    char *buffer = malloc(*length);
    if (buffer) memcpy(buffer, text, *length);
    return buffer;
}

static char *invoke(void *context, const char *handler, const char *request, size_t request_length,
                    size_t *response_length) {
    (void)context, (void)request, (void)request_length;
    if (strcmp(handler, "huge") == 0) {
        char *response = copy("{}", response_length);
        *response_length = (size_t)1 << 40;
        return response;
    }
    if (strcmp(handler, "enormous") == 0) {
        char *response = copy("{}", response_length);
        *response_length = (size_t)1 << 63;
        return response;
    }
    return copy("{\"status\":\"succeeded\"}", response_length);
}

enum { unterminated_length = 128 << 10 };

static char *check_parameters(void *context, const char *handler, const char *parameters,
                              size_t parameters_length) {
    (void)context, (void)parameters, (void)parameters_length;
    if (strcmp(handler, "unterminated") != 0) return NULL;
    char *message = malloc(unterminated_length);
    if (message) memset(message, 'x', unterminated_length);
    return message;
}

static void free_response(void *context, char *response) {
    (void)context;
    free(response);
}

static const char *const handlers[] = {"ok", "huge", "unterminated", "enormous"};

static const jobrunner_plugin_descriptor descriptor = {
    .abi_version = JOBRUNNER_PLUGIN_ABI_VERSION,
    .name = "liar",
    .version = "1.0.0",
    .handler_count = 4,
    .handlers = handlers,
    .invoke = invoke,
    .check_parameters = check_parameters,
    .free_response = free_response,
};

__attribute__((visibility("default"))) const jobrunner_plugin_descriptor *jobrunner_plugin_v1(void) {
    return &descriptor;
}
