/// Text from a job file, a job or a command line made safe to print on a terminal.
///
/// Job files and jobs can carry any character: a newline in a quoted value would put part of a
/// message on a line of its own, with no `FILE:LINE:COLUMN` in front; an escape sequence written
/// by a job (`ESC ] 0 ; title BEL`, `ESC [ 2 J`) would retitle or clear the terminal of whoever
/// reads `status` or the progress lines. Every control character is therefore shown as an escape
/// that can be read: `\n`, `\r`, `\t`, `\0`, and `\x1B` (C0 and DEL) or `\u{9B}` (C1) for the rest.
public enum VisibleText {
    /// The longest value a message quotes whole, in characters.
    public static let quotedLength = 60

    /// A value as a message quotes it: in single quotes, cut to its first ``quotedLength``
    /// characters (`…` marks the cut), so that one huge value does not make a huge message.
    public static func quoted(_ text: some StringProtocol) -> String {
        "'\(shortened(text))'"
    }

    /// `text` cut to its first ``quotedLength`` characters, `…` marking the cut.
    public static func shortened(_ text: some StringProtocol) -> String {
        guard text.utf8.count > quotedLength else { return String(text) }
        let prefix = text.prefix(quotedLength)
        return prefix.count < text.count ? prefix + "…" : String(text)
    }

    /// `text` with every control character written as a visible escape; unchanged (and not
    /// copied character by character) when it has none.
    public static func escaped(_ text: some StringProtocol) -> String {
        escaped(String(text))
    }

    /// The same for a `String`: not generic, so that the look at its bytes is compiled for
    /// `String` itself rather than called through the protocol's witnesses, one byte at a time.
    public static func escaped(_ text: String) -> String {
        // Bytes first (the progress display escapes two lines per job): a control character
        // is a byte below 0x20 or 0x7F, or a C1 control, whose UTF-8 starts with 0xC2.
        guard text.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F || $0 == 0xC2 }),
            text.unicodeScalars.contains(where: needsEscape)
        else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            guard needsEscape(scalar) else {
                result.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case "\0": result += "\\0"
            default:
                let hex = String(scalar.value, radix: 16, uppercase: true)
                let padded = hex.count < 2 ? "0" + hex : hex
                result += scalar.value < 0x80 ? "\\x\(padded)" : "\\u{\(padded)}"
            }
        }
        return result
    }

    /// C0 controls, DEL and the C1 controls (terminals act on 0x9B as on `ESC [`).
    static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (scalar.value >= 0x7F && scalar.value <= 0x9F)
    }
}
