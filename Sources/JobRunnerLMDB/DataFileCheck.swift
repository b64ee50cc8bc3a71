import Foundation
import Glibc
import JobRunnerCore

/// What can be checked of `data.mdb` before LMDB maps it: LMDB trusts its file, and a truncated
/// or overwritten one makes it read past the end of the mapping (SIGBUS) or follow garbage
/// pointers. Both meta pages are read with plain `read`s; the newest valid one must describe a
/// file at least as long as the one on disk.
enum DataFileCheck {
    /// LMDB's magic number at the start of each meta page's body.
    static let magic: UInt32 = 0xBEEF_C0DE
    /// The only data file version this LMDB writes.
    static let version: UInt32 = 1

    /// A meta page as far as it is checked here (lmdb's `MDB_meta`, after the 16-byte page header).
    struct Meta: Equatable {
        var pageSize: UInt32
        var lastPage: UInt64
        var transaction: UInt64
    }

    /// Throws a `.corrupt` error that says what is wrong when the file cannot be a database LMDB
    /// may map; a missing file is fine (LMDB creates it).
    static func verify(_ path: String) throws(StoreError) {
        guard let handle = try openRegularFile(path) else { return }
        defer { try? handle.close() }
        let size = (try? handle.seekToEnd()) ?? 0
        func damaged(_ why: String) -> StoreError {
            StoreError(
                .corrupt,
                "the state database \(path) is damaged: \(why); restore it from a backup, or move the state directory aside to start afresh"
            )
        }
        guard size > 0 else {
            throw damaged("the file is empty, so its history is gone")
        }
        try? handle.seek(toOffset: 0)
        let head = (try? handle.read(upToCount: 16 + 160)) ?? Data()
        guard let first = meta(in: head) else { throw damaged("its first meta page is not LMDB's") }
        let pageSize = UInt64(first.pageSize)
        guard pageSize >= 512, pageSize <= 65536, pageSize & (pageSize - 1) == 0 else {
            throw damaged("its page size \(pageSize) is not one LMDB writes")
        }
        guard size >= 2 * pageSize else { throw damaged("it is shorter than its two meta pages") }
        try? handle.seek(toOffset: pageSize)
        let secondHead = (try? handle.read(upToCount: 16 + 160)) ?? Data()
        let second = meta(in: secondHead)
        if let second, !inTurn(first.transaction, second.transaction) {
            // A writer may have committed between the two reads: only a pair that stays is damage.
            usleep(20_000)
            let again = [UInt64(0), pageSize].map { (offset: UInt64) -> UInt64? in
                try? handle.seek(toOffset: offset)
                return Self.meta(in: (try? handle.read(upToCount: 16 + 160)) ?? Data())?.transaction
            }
            if again == [first.transaction, second.transaction] {
                throw damaged(
                    "its meta pages' transaction ids, \(first.transaction) and \(second.transaction), are not those of two commits in a row (one was changed, and LMDB would open an older commit than the last)"
                )
            }
        }
        // LMDB uses the meta page with the higher transaction id; both are written in turn.
        let newest =
            [(first, head), second.map { ($0, secondHead) }].compactMap { $0 }
            .max { $0.0.transaction < $1.0.transaction } ?? (first, head)
        guard let needed = reach(of: newest.0, pageSize: pageSize) else {
            throw damaged("its meta page counts \(newest.0.lastPage) pages, more than any file holds")
        }
        guard needed <= size else {
            throw damaged("it holds \(size) bytes but its pages reach to byte \(needed) (truncated?)")
        }
        // The walk reads pages as no LMDB reader: a commit under way (another process's) may
        // rewrite pages it reads. Damage is only believed when two walks of the same
        // transaction, apart, find it; a file that keeps changing has a live writer, which maps
        // it fine.
        var meta = newest
        var failed: (transaction: UInt64, why: String)?
        for _ in 0..<5 {
            do {
                try PageWalk.check(
                    path: path, meta: [UInt8](meta.1), pageSize: Int(pageSize), lastPage: meta.0.lastPage)
                return
            } catch {
                if let failed, failed.transaction == meta.0.transaction { throw damaged(failed.why) }
                failed = (meta.0.transaction, error.why)
            }
            usleep(20_000)
            try? handle.seek(toOffset: 0)
            let firstAgain = (try? handle.read(upToCount: 16 + 160)) ?? Data()
            try? handle.seek(toOffset: pageSize)
            let secondAgain = (try? handle.read(upToCount: 16 + 160)) ?? Data()
            let metas = [firstAgain, secondAgain].compactMap { bytes in
                Self.meta(in: bytes).map { ($0, bytes) }
            }
            guard let newer = metas.max(by: { $0.0.transaction < $1.0.transaction }),
                let reached = reach(of: newer.0, pageSize: pageSize),
                reached <= ((try? handle.seekToEnd()) ?? 0)
            else { return }
            meta = newer
        }
    }

    /// Whether the transaction ids of the two meta pages are as LMDB leaves them: it writes
    /// commit N's meta page into page N mod 2, so page 0 holds an even id, page 1 an odd one,
    /// and the two are consecutive (or both 0: nothing was ever committed). A file copied with
    /// `mdb_copy`, compacted or not, is so too.
    static func inTurn(_ first: UInt64, _ second: UInt64) -> Bool {
        if first == 0 && second == 0 { return true }
        return first % 2 == 0 && second % 2 == 1 && (first == second &+ 1 || second == first &+ 1)
    }

    /// The end of the pages `meta` says the file holds, in bytes; nil when that is past any
    /// file (a damaged page count must not overflow).
    static func reach(of meta: Meta, pageSize: UInt64) -> UInt64? {
        let (pages, overflow) = meta.lastPage.addingReportingOverflow(1)
        let (bytes, overflowAgain) = pages.multipliedReportingOverflow(by: pageSize)
        return overflow || overflowAgain ? nil : bytes
    }

    /// The file at `path` opened for reading, or nil when there is none (LMDB creates it).
    /// Throws when it is there but is not a regular file: a FIFO would block the open, and
    /// LMDB, forever; a device or a directory is no database. Opened without blocking, then
    /// looked at, so what is looked at is what is read.
    static func openRegularFile(_ path: String) throws(StoreError) -> FileHandle? {
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            let kind = fileKind(info.st_mode)
            close(fd)
            throw StoreError(
                .unusable,
                "the state database \(path) is \(kind), not a regular file; move it aside, or pass --state DIR"
            )
        }
        return FileHandle(fileDescriptor: fd, closeOnDealloc: true)
    }

    /// Throws when LMDB's lock file at `path` is there but is not a regular file (LMDB fails
    /// on it with "Illegal seek", which says nothing of what to do).
    static func verifyLockFile(_ path: String) throws(StoreError) {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT != S_IFREG else { return }
        throw StoreError(
            .unusable,
            "the state database's lock file \(path) is \(fileKind(info.st_mode)), not a regular file; remove it (LMDB makes it again), or pass --state DIR"
        )
    }

    /// What a file of mode `mode` is, in words (for one that is not a regular file).
    static func fileKind(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFIFO: "a FIFO (named pipe)"
        case S_IFDIR: "a directory"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFSOCK: "a socket"
        default: "not a plain file"
        }
    }

    /// Whether the file holds pages beyond its two meta pages: some transaction was committed
    /// to it, so it is not the file of a store that never opened. False when it is missing, and
    /// when both meta pages are still as LMDB made them (no transaction, no page but themselves):
    /// the first commit wrote its pages and died before its meta page, and nothing was stored.
    static func holdsPages(_ path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        let size = (try? handle.seekToEnd()) ?? 0
        try? handle.seek(toOffset: 0)
        let first = meta(in: (try? handle.read(upToCount: 16 + 160)) ?? Data())
        let pageSize = first.map { UInt64($0.pageSize) } ?? 4096
        try? handle.seek(toOffset: pageSize)
        let second = meta(in: (try? handle.read(upToCount: 16 + 160)) ?? Data())
        let neverCommitted = [first, second].allSatisfy { $0?.transaction == 0 && $0?.lastPage == 1 }
        return size > 2 * pageSize && !neverCommitted
    }

    /// The meta page at the start of `page`, or nil when its magic or version is wrong.
    static func meta(in page: Data) -> Meta? {
        guard page.count >= 16 + 136 else { return nil }
        let bytes = [UInt8](page)
        func integer<T: FixedWidthInteger>(_ offset: Int, _: T.Type) -> T {
            var value: T = 0
            for index in (0..<MemoryLayout<T>.size).reversed() {
                value = value << 8 | T(bytes[offset + index])
            }
            return value
        }
        // MDB_meta: magic, version, address, mapsize, two MDB_db of 48 bytes (the first one's
        // md_pad holds the page size), last page, transaction id.
        guard integer(16, UInt32.self) == magic, integer(20, UInt32.self) == version else { return nil }
        return Meta(
            pageSize: integer(40, UInt32.self), lastPage: integer(136, UInt64.self),
            transaction: integer(144, UInt64.self))
    }
}
