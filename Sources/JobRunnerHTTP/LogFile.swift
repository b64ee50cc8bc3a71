import Foundation
import Glibc
import HTTPTypes
import Hummingbird
import NIOCore

/// An attempt's log served from its file by ranges (`Range: bytes=A-B`, `bytes=A-`,
/// `bytes=-N`), in pieces of 64 KiB: a huge log is never read whole into memory.
enum LogFile {
    /// A byte range asked for, resolved against the file's size; nil: none asked (the whole).
    enum Asked: Equatable {
        case whole
        case range(ClosedRange<UInt64>)
        case unsatisfiable
    }

    /// Resolves a `Range` header against `size` (RFC 9110 14.1.2; one range only, else whole).
    static func resolve(_ header: String?, size: UInt64) -> Asked {
        guard let header, header.hasPrefix("bytes="), !header.contains(",") else { return .whole }
        let spec = header.dropFirst("bytes=".count).trimmingCharacters(in: .whitespaces)
        let parts = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return .whole }
        if parts[0].isEmpty {
            // The last N bytes.
            guard let suffix = UInt64(parts[1]), suffix > 0 else { return .whole }
            if size == 0 { return .unsatisfiable }
            return .range((size - min(suffix, size))...(size - 1))
        }
        guard let first = UInt64(parts[0]) else { return .whole }
        let last = parts[1].isEmpty ? size &- 1 : UInt64(parts[1]).map { min($0, size &- 1) }
        guard let last, size > 0, first < size else { return .unsatisfiable }
        guard first <= last else { return .whole }
        return .range(first...last)
    }

    static func response(path: String, range header: String?, download: Bool, name: String) -> Response {
        var headers: HTTPFields = [
            .contentType: "text/plain; charset=utf-8", .acceptRanges: "bytes", .cacheControl: "no-store",
            .xContentTypeOptions: "nosniff",
        ]
        if download {
            let safe = name.map { $0.isLetter || $0.isNumber || "-_.".contains($0) ? $0 : "_" }
            headers[.contentDisposition] = "attachment; filename=\"\(String(safe))\""
        }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            // No log (yet): an attempt that has written nothing.
            headers[.contentLength] = "0"
            return Response(status: .ok, headers: headers, body: ResponseBody())
        }
        // Its size by seeking to its end (reads are `pread`s at offsets): `struct stat`, which
        // Glibc and Dispatch's C modules both bring, is refused in release builds under
        // MemberImportVisibility as "not available due to missing import of CDispatch".
        let end = lseek(fd, 0, SEEK_END)
        let size = end > 0 ? UInt64(end) : 0
        let status: HTTPResponse.Status
        let range: ClosedRange<UInt64>?
        switch resolve(header, size: size) {
        case .whole:
            status = .ok
            range = size == 0 ? nil : 0...(size - 1)
        case .range(let asked):
            status = .partialContent
            range = asked
            headers[.contentRange] = "bytes \(asked.lowerBound)-\(asked.upperBound)/\(size)"
        case .unsatisfiable:
            close(fd)
            headers[.contentRange] = "bytes */\(size)"
            return Response(status: .rangeNotSatisfiable, headers: headers, body: ResponseBody())
        }
        guard let range else {
            close(fd)
            return Response(status: status, headers: headers, body: ResponseBody())
        }
        let length = Int(range.upperBound - range.lowerBound + 1)
        let descriptor = FileDescriptor(fd)
        let body = ResponseBody(contentLength: length) { writer in
            defer { descriptor.close() }
            var offset = range.lowerBound
            var left = length
            var chunk = [UInt8](repeating: 0, count: 64 << 10)
            while left > 0 {
                let want = min(left, chunk.count)
                let read = chunk.withUnsafeMutableBytes {
                    pread(descriptor.fd, $0.baseAddress, want, off_t(offset))
                }
                // A log cut short meanwhile (pruned): the rest is zeros rather than a short body.
                if read <= 0 {
                    try await writer.write(ByteBuffer(repeating: 0, count: left))
                    break
                }
                try await writer.write(ByteBuffer(bytes: chunk[0..<read]))
                offset += UInt64(read)
                left -= read
            }
            try await writer.finish(nil)
        }
        return Response(status: status, headers: headers, body: body)
    }
}

/// A descriptor closed once, from the body's writer.
private final class FileDescriptor: Sendable {
    let fd: Int32
    init(_ fd: Int32) { self.fd = fd }
    func close() { _ = Glibc.close(fd) }
}
