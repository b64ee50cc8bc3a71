import Foundation
import Glibc
import JobRunnerCore

/// Descriptors the runner hands to a child it starts through swift-subprocess, and closes itself
/// (never with `closeAfterSpawningProcess: true`): swift-subprocess traps in a descriptor's
/// `deinit` when it was to close it and a later step failed first, such as making the next
/// pipe with every descriptor in use (`ulimit -n`). Each is closed once, by whichever comes
/// first: the spawn (the child has its copy) or the failure to spawn.
final class OwnedDescriptors: Sendable {
    private let descriptors: Locked<[Int32]>

    init(_ descriptors: [Int32]) {
        self.descriptors = Locked(descriptors.filter { $0 >= 0 })
    }

    /// Closes every descriptor not closed yet.
    func close() {
        for fd in descriptors.withLock({ descriptors in
            defer { descriptors = [] }
            return descriptors
        }) {
            _ = Glibc.close(fd)
        }
    }

    /// Forgets the descriptors without closing them: another owner took them.
    func release() {
        descriptors.withLock { $0 = [] }
    }

    deinit { close() }

    /// A connected pair of descriptors, close-on-exec from their creation (no process another
    /// thread starts can inherit them): [read end, write end], or nil with `errno` set. A socket
    /// pair, for Glibc offers no `pipe2` to Swift; used one way, like a pipe.
    static func closeOnExecPair() -> [Int32]? {
        var pair: [Int32] = [-1, -1]
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, type, 0, &pair) == 0 else { return nil }
        return pair
    }

    /// Writes `bytes` to `fd` on a thread of its own, then closes it: the child reads its input
    /// while the runner waits for its output. A child that exits without reading makes the
    /// write fail (EPIPE, with SIGPIPE blocked on that thread), which ends it.
    static func feed(_ bytes: [UInt8], to fd: Int32) {
        let thread = Thread {
            var blocked = sigset_t()
            sigemptyset(&blocked)
            sigaddset(&blocked, SIGPIPE)
            pthread_sigmask(SIG_BLOCK, &blocked, nil)
            bytes.withUnsafeBytes { buffer in
                var offset = 0
                while offset < buffer.count {
                    let written = write(fd, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
                    if written < 0 {
                        if errno == EINTR { continue }
                        break
                    }
                    offset += written
                }
            }
            _ = Glibc.close(fd)
        }
        thread.name = "jobrunner child input"
        thread.start()
    }
}
