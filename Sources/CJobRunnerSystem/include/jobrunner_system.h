#ifndef JOBRUNNER_SYSTEM_H
#define JOBRUNNER_SYSTEM_H

/// Makes the calling process a child subreaper (Linux prctl PR_SET_CHILD_SUBREAPER): processes
/// orphaned below it are re-parented to it rather than to PID 1. Returns 0, or -1 with errno
/// set (always -1 where the call does not exist). prctl is variadic, which Swift cannot call.
int jobrunner_become_subreaper(void);

/// Whether the calling process is a child subreaper: 1, 0, or -1 with errno set.
int jobrunner_is_subreaper(void);

#include <sys/types.h>

/// Starts `path` (no PATH search) with `argv` and `envp` as the leader of a new process group,
/// with `input`, `output` and `error` as its descriptors 0, 1 and 2, every other descriptor
/// closed, every signal at its default action and none blocked, in `directory` (NULL: this
/// process's). Returns 0 with `*pid` and `*pidfd` (a close-on-exec process descriptor) set, or
/// the error number of what failed (posix_spawn reports a failed exec or chdir here). On Linux
/// only; ENOSYS elsewhere. posix_spawn's attributes and file actions are macros and opaque types
/// Swift handles badly, hence C.
int jobrunner_spawn(const char *path, char *const argv[], char *const envp[], const char *directory,
                    int input, int output, int error, pid_t *pid, int *pidfd);

/// Reaps the exited child behind `pidfd` without blocking. Returns 1 with `*exited` (1: it
/// exited, `*value` is its status; 0: a signal ended it, `*value` is the signal) set, 0 when it
/// has not ended, or -1 with errno set.
int jobrunner_reap(int pidfd, int *exited, int *value);

/// Whether waitid takes a process descriptor (P_PIDFD, Linux 5.4; pidfd_open came in 5.3):
/// asks waitid(P_PIDFD, `pidfd`, WEXITED | WNOHANG | WNOWAIT), which changes nothing, and
/// returns 0 when it answered, else its error number. For this process's own descriptor a
/// kernel that knows P_PIDFD answers ECHILD (not a child); one that does not answers EINVAL.
int jobrunner_pidfd_wait_probe(int pidfd);

/// A process descriptor for `pid` (close-on-exec), or -1 with errno set.
int jobrunner_pidfd_open(pid_t pid);

/// A pipe, both ends close-on-exec, the read end (`fds[0]`) non-blocking: 0, or -1 with errno.
int jobrunner_pipe(int fds[2]);

/// How many bytes the pipe `fd` holds now (FIONREAD), or -1 with errno set.
int jobrunner_pipe_holds(int fd);

/// A close-on-exec epoll instance, or -1 with errno set.
int jobrunner_epoll_create(void);

/// Watches `fd` for input (level-triggered), its number as the event's data: 0, or -1.
int jobrunner_epoll_add(int epoll, int fd);

/// Stops watching `fd`: 0, or -1 with errno set.
int jobrunner_epoll_remove(int epoll, int fd);

/// Waits up to `timeout` milliseconds (-1: without a limit) for watched descriptors to be ready
/// and puts up to `capacity` of them in `fds`: their count (0 when the time ran out), or -1
/// with errno set (EINTR included).
int jobrunner_epoll_wait(int epoll, int *fds, int capacity, int timeout);

/// The process's environment (`environ`), for a caller that builds a whole new one at once.
char **jobrunner_environment(void);

/// Makes `table` (NULL-terminated `NAME=value` strings, kept for the life of the process) the
/// process's environment, as one assignment of `environ`.
void jobrunner_replace_environment(char **table);

#endif
