// A malformed test plugin: a constructor that never returns, so loading the library never
// ends; whoever loads it must give up after a while.
#include <unistd.h>

#include "jobrunner_plugin.h"

__attribute__((constructor)) static void hang_on_load(void) {
    for (;;) pause();
}

__attribute__((visibility("default"))) const jobrunner_plugin_descriptor *jobrunner_plugin_v1(void) {
    return NULL;
}
