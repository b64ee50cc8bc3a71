import CZlib

/// How a record's value is stored: with a checksum, so that a changed byte is found when it is
/// read, not taken for a record.
///
/// Since schema 2 a value is framed: one byte ``tag``, then the CRC-32 (zlib's `crc32`) of the
/// key and the payload as 4 little-endian bytes, then the payload (the record's JSON, or the
/// text of a run id). The key is in the checksum, so a record whose key changed (a flipped byte
/// in it) is found too. A value written by a jobrunner of schema 1 is the payload alone: JSON,
/// whose first byte is `{`, or the text of a run id, printable ASCII; never ``tag``. Such a value
/// is read as it was written, and judged by decoding it (``RecordCheck``): it has no checksum.
///
/// CRC-32 finds every change of one byte, and of any run of up to 32 bits, for sure; other
/// damage is missed with a chance of one in 2^32.
enum StoredValue {
    /// The first byte of a framed value: not printable, so no schema-1 value starts with it.
    static let tag: UInt8 = 0x02
    /// The tag and the checksum.
    static let headerSize = 5

    /// A value as read: its payload, and whether it had a checksum (which then matched).
    struct Opened {
        let payload: UnsafeRawBufferPointer
        let checked: Bool
    }

    /// The checksum of `key` and `payload`.
    static func checksum(key: UnsafeRawBufferPointer, payload: UnsafeRawBufferPointer) -> UInt32 {
        var crc = crc32_z(0, nil, 0)
        if let base = key.baseAddress, !key.isEmpty {
            crc = crc32_z(crc, base.assumingMemoryBound(to: UInt8.self), key.count)
        }
        if let base = payload.baseAddress, !payload.isEmpty {
            crc = crc32_z(crc, base.assumingMemoryBound(to: UInt8.self), payload.count)
        }
        return UInt32(truncatingIfNeeded: crc)
    }

    /// Writes the framed value of `payload` under `key` into `destination`, which holds
    /// `headerSize + payload.count` bytes.
    static func frame(
        key: UnsafeRawBufferPointer, payload: UnsafeRawBufferPointer,
        into destination: UnsafeMutableRawPointer
    ) {
        let crc = checksum(key: key, payload: payload)
        destination.storeBytes(of: tag, as: UInt8.self)
        for index in 0..<4 {
            destination.storeBytes(
                of: UInt8(truncatingIfNeeded: crc >> (8 * index)), toByteOffset: 1 + index, as: UInt8.self)
        }
        if let base = payload.baseAddress, !payload.isEmpty {
            (destination + headerSize).copyMemory(from: base, byteCount: payload.count)
        }
    }

    /// The payload of a stored value, its checksum verified; a schema-1 value (no ``tag``) as it
    /// is. Nil when the checksum does not match (or a framed value is too short to hold one).
    static func open(_ value: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer) -> Opened? {
        guard let first = value.first, first == tag else {
            return Opened(payload: value, checked: false)
        }
        guard value.count >= headerSize else { return nil }
        var stored: UInt32 = 0
        for index in 0..<4 { stored |= UInt32(value[1 + index]) << (8 * index) }
        let payload = UnsafeRawBufferPointer(rebasing: value[headerSize...])
        guard checksum(key: key, payload: payload) == stored else { return nil }
        return Opened(payload: payload, checked: true)
    }

    /// A key in words for a message: its parts (the store separates them with a zero byte)
    /// joined by `/`, an attempt's, a request's or an event's number (8 bytes at the end) as
    /// `#N`, any other byte that is not printable as `?`.
    static func describe(key: UnsafeRawBufferPointer) -> String {
        var body = Array(key)
        var number: UInt64?
        let printable = UInt8(0x20)..<UInt8(0x7F)
        if body.count >= 8, body.suffix(8).contains(where: { !printable.contains($0) }),
            body.count == 8 || body[body.count - 9] == StoreKey.separator
        {
            number = body.suffix(8).reduce(0) { $0 << 8 | UInt64($1) }
            body.removeLast(body.count == 8 ? 8 : 9)
        }
        let parts = body.split(separator: StoreKey.separator).map { part in
            String(decoding: part.map { printable.contains($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
        }
        return (parts + (number.map { ["#\($0)"] } ?? [])).joined(separator: "/")
    }
}
