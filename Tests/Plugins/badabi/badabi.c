// A test plugin that speaks a future ABI version: loading it must fail with an ABI mismatch.
#include <stdlib.h>

#include "jobrunner_plugin.h"

static char *invoke(void *context, const char *handler, const char *request, size_t request_length,
                    size_t *response_length) {
    (void)context, (void)handler, (void)request, (void)request_length, (void)response_length;
    return NULL;
}

static void free_response(void *context, char *response) {
    (void)context;
    free(response);
}

static const char *const handlers[] = {"run"};

static const jobrunner_plugin_descriptor descriptor = {
    .abi_version = JOBRUNNER_PLUGIN_ABI_VERSION + 1,
    .name = "badabi",
    .version = "9.9.9",
    .handler_count = 1,
    .handlers = handlers,
    .invoke = invoke,
    .free_response = free_response,
};

__attribute__((visibility("default"))) const jobrunner_plugin_descriptor *jobrunner_plugin_v1(void) {
    return &descriptor;
}
