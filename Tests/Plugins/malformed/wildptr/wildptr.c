// A malformed test plugin: jobrunner_plugin_v1 returns the address 0x1234, where no descriptor
// is. Reading it crashes whoever reads it.
#include <stdint.h>

#include "jobrunner_plugin.h"

__attribute__((visibility("default"))) const jobrunner_plugin_descriptor *jobrunner_plugin_v1(void) {
    return (const jobrunner_plugin_descriptor *)(uintptr_t)0x1234;
}
