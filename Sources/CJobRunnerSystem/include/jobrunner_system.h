#ifndef JOBRUNNER_SYSTEM_H
#define JOBRUNNER_SYSTEM_H

/// Makes the calling process a child subreaper (Linux prctl PR_SET_CHILD_SUBREAPER): processes
/// orphaned below it are re-parented to it rather than to PID 1. Returns 0, or -1 with errno
/// set (always -1 where the call does not exist). prctl is variadic, which Swift cannot call.
int jobrunner_become_subreaper(void);

/// Whether the calling process is a child subreaper: 1, 0, or -1 with errno set.
int jobrunner_is_subreaper(void);

#endif
