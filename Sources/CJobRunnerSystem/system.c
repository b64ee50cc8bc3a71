#define _GNU_SOURCE
#include "jobrunner_system.h"

#include <errno.h>
#if defined(__linux__)
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

extern char **environ;

char **jobrunner_environment(void) {
    return environ;
}

void jobrunner_replace_environment(char **table) {
    environ = table;
}

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

#if defined(__linux__)
#ifndef P_PIDFD
#define P_PIDFD 3
#endif

int jobrunner_pidfd_open(pid_t pid) {
    return (int)syscall(SYS_pidfd_open, pid, 0);
}

int jobrunner_pipe(int fds[2]) {
    if (pipe2(fds, O_CLOEXEC) != 0) return -1;
    int flags = fcntl(fds[0], F_GETFL);
    if (flags < 0 || fcntl(fds[0], F_SETFL, flags | O_NONBLOCK) != 0) {
        int why = errno;
        close(fds[0]);
        close(fds[1]);
        errno = why;
        return -1;
    }
    return 0;
}

int jobrunner_pipe_holds(int fd) {
    int count = 0;
    if (ioctl(fd, FIONREAD, &count) != 0) return -1;
    return count;
}

int jobrunner_epoll_create(void) {
    return epoll_create1(EPOLL_CLOEXEC);
}

int jobrunner_epoll_add(int epoll, int fd) {
    struct epoll_event event = {.events = EPOLLIN, .data = {.fd = fd}};
    return epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event);
}

int jobrunner_epoll_remove(int epoll, int fd) {
    return epoll_ctl(epoll, EPOLL_CTL_DEL, fd, NULL);
}

int jobrunner_epoll_wait(int epoll, int *fds, int capacity, int timeout) {
    struct epoll_event events[64];
    if (capacity > 64) capacity = 64;
    int count = epoll_wait(epoll, events, capacity, timeout);
    for (int i = 0; i < count; i++) fds[i] = events[i].data.fd;
    return count;
}

/// `fd` moved to 3 or above (close-on-exec), so that putting the child's 0, 1 and 2 in place
/// cannot overwrite a descriptor another of them still needs; -1 with errno set.
static int lifted(int fd, int *copy) {
    *copy = -1;
    if (fd > 2) return fd;
    *copy = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    return *copy;
}

int jobrunner_spawn(const char *path, char *const argv[], char *const envp[], const char *directory,
                    int input, int output, int error, pid_t *pid, int *pidfd) {
    int copies[3];
    int fds[3] = {lifted(input, &copies[0]), lifted(output, &copies[1]), lifted(error, &copies[2])};
    int rc = 0;
    if (fds[0] < 0 || fds[1] < 0 || fds[2] < 0) rc = errno;
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    int haveActions = 0, haveAttributes = 0;
    if (rc == 0 && (rc = posix_spawn_file_actions_init(&actions)) == 0) haveActions = 1;
    if (rc == 0 && (rc = posix_spawnattr_init(&attributes)) == 0) haveAttributes = 1;
    for (int target = 0; rc == 0 && target < 3; target++) {
        rc = posix_spawn_file_actions_adddup2(&actions, fds[target], target);
    }
    if (rc == 0 && directory != NULL) rc = posix_spawn_file_actions_addchdir_np(&actions, directory);
    if (rc == 0) rc = posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    sigset_t all, none;
    sigfillset(&all);
    sigemptyset(&none);
    if (rc == 0) rc = posix_spawnattr_setsigdefault(&attributes, &all);
    if (rc == 0) rc = posix_spawnattr_setsigmask(&attributes, &none);
    if (rc == 0) rc = posix_spawnattr_setpgroup(&attributes, 0);
    if (rc == 0) {
        rc = posix_spawnattr_setflags(
            &attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    }
    pid_t child = 0;
    if (rc == 0) rc = posix_spawn(&child, path, &actions, &attributes, argv, envp);
    if (haveActions) posix_spawn_file_actions_destroy(&actions);
    if (haveAttributes) posix_spawnattr_destroy(&attributes);
    for (int i = 0; i < 3; i++) {
        if (copies[i] >= 0) close(copies[i]);
    }
    if (rc != 0) return rc;
    *pid = child;
    *pidfd = jobrunner_pidfd_open(child);
    if (*pidfd < 0) {
        // Cannot happen for a child not yet reaped on a kernel that has pidfd_open (checked
        // before this path is taken); end and reap it rather than leave it unwatched.
        int why = errno;
        kill(-child, SIGKILL);
        waitpid(child, NULL, 0);
        return why;
    }
    return 0;
}

int jobrunner_pidfd_wait_probe(int pidfd) {
    siginfo_t info;
    int rc;
    do {
        rc = waitid((idtype_t)P_PIDFD, (id_t)pidfd, &info, WEXITED | WNOHANG | WNOWAIT);
    } while (rc != 0 && errno == EINTR);
    return rc == 0 ? 0 : errno;
}

int jobrunner_reap(int pidfd, int *exited, int *value) {
    siginfo_t info;
    info.si_pid = 0;
    int rc;
    do {
        rc = waitid((idtype_t)P_PIDFD, (id_t)pidfd, &info, WEXITED | WNOHANG);
    } while (rc != 0 && errno == EINTR);
    if (rc != 0) return -1;
    if (info.si_pid == 0) return 0;
    *exited = info.si_code == CLD_EXITED;
    *value = info.si_status;
    return 1;
}
#else
int jobrunner_pipe_holds(int fd) {
    (void)fd;
    errno = ENOSYS;
    return -1;
}

int jobrunner_pipe(int fds[2]) {
    (void)fds;
    errno = ENOSYS;
    return -1;
}

int jobrunner_epoll_create(void) {
    errno = ENOSYS;
    return -1;
}

int jobrunner_epoll_add(int epoll, int fd) {
    (void)epoll, (void)fd;
    errno = ENOSYS;
    return -1;
}

int jobrunner_epoll_remove(int epoll, int fd) {
    (void)epoll, (void)fd;
    errno = ENOSYS;
    return -1;
}

int jobrunner_epoll_wait(int epoll, int *fds, int capacity, int timeout) {
    (void)epoll, (void)fds, (void)capacity, (void)timeout;
    errno = ENOSYS;
    return -1;
}

int jobrunner_pidfd_open(pid_t pid) {
    (void)pid;
    errno = ENOSYS;
    return -1;
}

int jobrunner_spawn(const char *path, char *const argv[], char *const envp[], const char *directory,
                    int input, int output, int error, pid_t *pid, int *pidfd) {
    (void)path, (void)argv, (void)envp, (void)directory, (void)input, (void)output, (void)error;
    (void)pid, (void)pidfd;
    return ENOSYS;
}

int jobrunner_pidfd_wait_probe(int pidfd) {
    (void)pidfd;
    return ENOSYS;
}

int jobrunner_reap(int pidfd, int *exited, int *value) {
    (void)pidfd, (void)exited, (void)value;
    errno = ENOSYS;
    return -1;
}
#endif
