import Foundation
import Glibc

/// A walk over every page of `data.mdb` reachable from the newest meta page, with plain reads,
/// before LMDB maps the file: LMDB trusts its pages, and damage inside one (a zeroed range, a
/// flipped bit) made it follow a garbage page number (SIGSEGV) or fail an assertion (SIGABRT).
/// Each page must be where it says it is, of the kind its parent expects, with its node
/// pointers, keys and values inside it, and every page number it holds within the file; no
/// page may be reached twice. (The layout is lmdb's `MDB_page`, `MDB_node` and `MDB_db`, for
/// databases opened without `MDB_DUPSORT`, as this store's are.)
struct PageWalk {
    /// What is wrong, in words for the refusal.
    struct Damage: Error {
        var why: String
    }

    private static let branch: UInt16 = 0x01
    private static let leaf: UInt16 = 0x02
    private static let overflow: UInt16 = 0x04
    private static let bigData: UInt16 = 0x01
    private static let subData: UInt16 = 0x02
    private static let invalid = UInt64.max
    private static let header = 16

    private let fd: Int32
    private let pageSize: Int
    private let lastPage: UInt64
    private var seen = Set<UInt64>()
    private var page: [UInt8]

    private init(fd: Int32, pageSize: Int, lastPage: UInt64) {
        self.fd = fd
        self.pageSize = pageSize
        self.lastPage = lastPage
        page = [UInt8](repeating: 0, count: pageSize)
    }

    /// Walks the free-page tree and the main tree of `meta` (the raw meta page), and every
    /// named table the main tree holds.
    static func check(path: String, meta: [UInt8], pageSize: Int, lastPage: UInt64) throws(Damage) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var walk = PageWalk(fd: fd, pageSize: pageSize, lastPage: lastPage)
        // MDB_meta after the page header: magic, version, address, mapsize, then the free-page
        // tree's MDB_db at 40 and the main tree's at 88 (depth at +6, root at +40).
        try walk.tree(
            root: integer(meta, 40 + 40, UInt64.self), depth: integer(meta, 40 + 6, UInt16.self), main: false,
            free: true)
        try walk.tree(
            root: integer(meta, 88 + 40, UInt64.self), depth: integer(meta, 88 + 6, UInt16.self), main: true)
    }

    /// - Parameters:
    ///   - main: the main tree, whose values may be named tables.
    ///   - free: the free-page tree, whose values are lists of page numbers.
    private mutating func tree(root: UInt64, depth: UInt16, main: Bool, free: Bool = false) throws(Damage) {
        if root == Self.invalid {
            guard depth == 0 else { throw Damage(why: "a table of depth \(depth) has no root page") }
            return
        }
        guard depth >= 1, depth <= 64 else { throw Damage(why: "a table has depth \(depth)") }
        // Depth first, with an explicit stack: a damaged depth must not overflow the call stack.
        var pending: [(page: UInt64, level: UInt16)] = [(root, depth)]
        var tables: [(root: UInt64, depth: UInt16)] = []
        while let (number, level) = pending.popLast() {
            try read(number)
            let flags = Self.integer(page, 10, UInt16.self) & 0x7F
            let expected = level > 1 ? Self.branch : Self.leaf
            guard flags == expected else {
                throw Damage(
                    why: "page \(number) is not the \(level > 1 ? "branch" : "leaf") page its tree expects")
            }
            let lower = Int(Self.integer(page, 12, UInt16.self))
            let upper = Int(Self.integer(page, 14, UInt16.self))
            guard lower >= Self.header, lower <= upper, upper <= pageSize, (lower - Self.header) % 2 == 0
            else {
                throw Damage(why: "page \(number) has impossible bounds")
            }
            let count = (lower - Self.header) / 2
            for index in 0..<count {
                let node = Int(Self.integer(page, Self.header + 2 * index, UInt16.self))
                guard node >= upper, node + 8 <= pageSize else {
                    throw Damage(why: "page \(number) points outside itself")
                }
                let low = UInt64(Self.integer(page, node, UInt16.self))
                let high = UInt64(Self.integer(page, node + 2, UInt16.self))
                let nodeFlags = Self.integer(page, node + 4, UInt16.self)
                let keySize = Int(Self.integer(page, node + 6, UInt16.self))
                guard node + 8 + keySize <= pageSize else {
                    throw Damage(why: "a key of page \(number) overruns it")
                }
                if level > 1 {
                    let child = low | high << 16 | UInt64(nodeFlags) << 32
                    guard child <= lastPage else {
                        throw Damage(why: "page \(number) names page \(child), past the end")
                    }
                    pending.append((child, level - 1))
                    continue
                }
                let dataSize = Int(low | high << 16)
                let data = node + 8 + keySize
                if nodeFlags & Self.bigData != 0 {
                    guard data + 8 <= pageSize else {
                        throw Damage(why: "a value of page \(number) overruns it")
                    }
                    try overflowPages(Self.integer(page, data, UInt64.self), holding: dataSize)
                    continue
                }
                guard nodeFlags & ~(Self.subData) == 0, data + dataSize <= pageSize else {
                    throw Damage(why: "a value of page \(number) overruns it")
                }
                if free {
                    // An IDL: a count, then that many page numbers.
                    let listed = dataSize >= 8 ? Int(clamping: Self.integer(page, data, UInt64.self)) : -1
                    guard listed >= 0, listed < pageSize, (listed + 1) * 8 == dataSize else {
                        throw Damage(why: "a list of free pages in page \(number) is malformed")
                    }
                    for item in 0..<listed
                    where Self.integer(page, data + 8 * (item + 1), UInt64.self) > lastPage {
                        throw Damage(why: "a list of free pages in page \(number) names a page past the end")
                    }
                }
                if nodeFlags & Self.subData != 0 {
                    guard main, dataSize == 48 else {
                        throw Damage(why: "page \(number) holds a malformed table")
                    }
                    tables.append(
                        (
                            Self.integer(page, data + 40, UInt64.self),
                            Self.integer(page, data + 6, UInt16.self)
                        ))
                }
            }
        }
        for table in tables { try tree(root: table.root, depth: table.depth, main: false) }
    }

    /// The pages of a value too large for its leaf.
    private mutating func overflowPages(_ first: UInt64, holding size: Int) throws(Damage) {
        guard first <= lastPage else { throw Damage(why: "a value names page \(first), past the end") }
        // Only its header, into a buffer of its own: the leaf being walked stays in `page`.
        guard seen.insert(first).inserted else { throw Damage(why: "page \(first) is reached twice") }
        var head = [UInt8](repeating: 0, count: Self.header)
        let count = head.withUnsafeMutableBytes {
            pread(fd, $0.baseAddress, $0.count, off_t(first) * off_t(pageSize))
        }
        guard count == Self.header, Self.integer(head, 0, UInt64.self) == first else {
            throw Damage(why: "the overflow pages at \(first) are damaged")
        }
        let pages = UInt64(Self.integer(head, 12, UInt32.self))
        guard Self.integer(head, 10, UInt16.self) & 0x7F == Self.overflow, pages >= 1,
            first + pages - 1 <= lastPage, UInt64(size) <= pages * UInt64(pageSize) - UInt64(Self.header)
        else { throw Damage(why: "the overflow pages at \(first) are damaged") }
        for number in (first + 1)..<(first + pages) where !seen.insert(number).inserted {
            throw Damage(why: "page \(number) is reached twice")
        }
    }

    /// Reads page `number` into `page`; it must say it is that page and not have been reached.
    private mutating func read(_ number: UInt64) throws(Damage) {
        guard number >= 2, number <= lastPage, seen.insert(number).inserted else {
            throw Damage(why: "page \(number) is reached twice or is not a tree page")
        }
        let offset = off_t(number) * off_t(pageSize)
        let count = page.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, offset) }
        guard count == pageSize else { throw Damage(why: "page \(number) cannot be read") }
        guard Self.integer(page, 0, UInt64.self) == number else {
            throw Damage(why: "page \(number) says it is page \(Self.integer(page, 0, UInt64.self))")
        }
    }

    /// A little-endian integer at `offset`.
    static func integer<T: FixedWidthInteger>(_ bytes: [UInt8], _ offset: Int, _: T.Type) -> T {
        var value: T = 0
        for index in (0..<MemoryLayout<T>.size).reversed() {
            value = value << 8 | T(bytes[offset + index])
        }
        return value
    }
}
