import Foundation

/// The pages of the data file this process has mapped, let go of now and then.
///
/// LMDB reads the data file through a shared, read-only map. Every page a transaction reads
/// stays mapped afterwards and counts in the runner's resident memory: by the end of a
/// 100,000-job run that is the whole data file (about 80 MB). Letting go of the mapping
/// (`MADV_DONTNEED`) changes no data: without `MDB_WRITEMAP` nothing is written through the
/// map, so the pages' contents are the file's, and the next read of one maps it again from the
/// page cache (or the file). A read in flight on another thread takes the same page again,
/// since LMDB never rewrites a page a reader may still see.
struct MappedPages {
    /// The map's first byte and length; nil when it was not found (then nothing is released).
    private let map: (address: UnsafeMutableRawPointer, length: Int)?

    /// Finds LMDB's map of `dataFile` among this process's mappings.
    init(dataFile: String) {
        map = Self.find(path: URL(fileURLWithPath: dataFile).resolvingSymlinksInPath().path)
    }

    /// Lets go of the mapped pages in the first `length` bytes of the file.
    func release(length: Int) {
        guard let map, length > 0 else { return }
        // Advice only: a failure leaves the pages mapped, which is where they were.
        _ = madvise(map.address, min(map.length, length), MADV_DONTNEED)
    }

    /// `/proc/self/maps` lines read `START-END PERMS OFFSET DEV INODE PATH`, in hex.
    /// LMDB's is the one shared, read-only mapping of the data file from its start.
    private static func find(path: String) -> (UnsafeMutableRawPointer, Int)? {
        guard let text = procText("/proc/self/maps") else { return nil }
        for line in text.split(separator: "\n") where line.hasSuffix(" " + path) {
            let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            let range = fields.first?.split(separator: "-") ?? []
            guard fields.count == 6, range.count == 2, fields[1] == "r--s", fields[2] == "00000000",
                let start = UInt(range[0], radix: 16), let end = UInt(range[1], radix: 16), end > start,
                let address = UnsafeMutableRawPointer(bitPattern: start)
            else { continue }
            return (address, Int(end - start))
        }
        return nil
    }

    /// A file of `/proc` read whole with plain reads: it has no size to read up to, and is
    /// made as it is read.
    static func procText(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count == 0 { break }
            if count < 0 {
                if errno == EINTR { continue }
                return nil
            }
            bytes.append(contentsOf: buffer[..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
