// A malformed test plugin: its descriptor claims 2^40 handlers behind a list of one. Reading
// them all would run far past the list; jobrunner must refuse the count instead.
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
    .abi_version = JOBRUNNER_PLUGIN_ABI_VERSION,
    .name = "hugecount",
    .version = "1.0.0",
    .handler_count = (size_t)1 << 40,
    .handlers = handlers,
    .invoke = invoke,
    .free_response = free_response,
};

__attribute__((visibility("default"))) const jobrunner_plugin_descriptor *jobrunner_plugin_v1(void) {
    return &descriptor;
}
