import Glibc

/// Writes all of `text` to a descriptor.
func writeText(_ fd: Int32, _ text: String) {
    writeBytes(fd, Array(text.utf8))
}

/// Writes all of `bytes` to a descriptor; gives up quietly when it cannot (a closed pipe).
func writeBytes(_ fd: Int32, _ bytes: [UInt8]) {
    bytes.withUnsafeBytes { buffer in
        var offset = 0
        while offset < buffer.count {
            let written = write(fd, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            offset += written
        }
    }
}
