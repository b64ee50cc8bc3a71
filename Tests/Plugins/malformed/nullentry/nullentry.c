// A malformed test plugin: jobrunner_plugin_v1 reads through a NULL pointer and crashes.
#include <stddef.h>

#include "jobrunner_plugin.h"

// Volatile, so the compiler keeps the read it cannot prove harmless.
static const jobrunner_plugin_descriptor *const *volatile nowhere = NULL;

__attribute__((visibility("default"))) const jobrunner_plugin_descriptor *jobrunner_plugin_v1(void) {
    return *nowhere;
}
