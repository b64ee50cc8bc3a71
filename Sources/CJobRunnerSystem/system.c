#include "jobrunner_system.h"

#include <errno.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

int jobrunner_become_subreaper(void) {
#if defined(__linux__)
    return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
#else
    errno = ENOSYS;
    return -1;
#endif
}

int jobrunner_is_subreaper(void) {
#if defined(__linux__)
    int value = 0;
    if (prctl(PR_GET_CHILD_SUBREAPER, &value, 0, 0, 0) != 0) return -1;
    return value != 0;
#else
    errno = ENOSYS;
    return -1;
#endif
}
