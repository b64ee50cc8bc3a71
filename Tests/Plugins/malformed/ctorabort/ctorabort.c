// A malformed test plugin: a constructor that calls abort(), so the process that loads the
// library dies before jobrunner_plugin_v1 is ever looked up.
#include <stdlib.h>

#include "jobrunner_plugin.h"

__attribute__((constructor)) static void die_on_load(void) { abort(); }

__attribute__((visibility("default"))) const jobrunner_plugin_descriptor *jobrunner_plugin_v1(void) {
    return NULL;
}
