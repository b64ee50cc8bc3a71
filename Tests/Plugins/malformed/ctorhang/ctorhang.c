// A malformed test plugin: with CTORHANG=1 in the environment, a constructor that never returns,
// so loading the library never ends and whoever loads it must give up after a while. Without
// it (so that `jobrunner plugins` in the build directory does not wait for it), the library
// loads and offers no descriptor.
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jobrunner_plugin.h"

__attribute__((constructor)) static void hang_on_load(void) {
    const char *hang = getenv("CTORHANG");
    if (hang && strcmp(hang, "1") == 0) {
        for (;;) pause();
    }
}

__attribute__((visibility("default"))) const jobrunner_plugin_descriptor *jobrunner_plugin_v1(void) {
    return NULL;
}
