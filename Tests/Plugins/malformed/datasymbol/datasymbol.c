// A malformed test plugin: jobrunner_plugin_v1 is the descriptor itself, a data symbol, not a
// function that returns it. Calling it jumps into data that cannot be executed.
#include <stddef.h>

#include "jobrunner_plugin.h"

static const char *const handlers[] = {"run"};

__attribute__((visibility("default"))) const jobrunner_plugin_descriptor jobrunner_plugin_v1 = {
    .abi_version = JOBRUNNER_PLUGIN_ABI_VERSION,
    .name = "datasymbol",
    .version = "1.0.0",
    .handler_count = 1,
    .handlers = handlers,
};
