import JobRunnerCore

/// Finds where, in a job file's text, a character stands that YAML does not allow.
enum TextCheck {
    /// The first character outside YAML's printable set (C0 controls other than tab and line
    /// breaks, DEL, C1 controls other than NEL, U+FFFE and U+FFFF), with its line and column
    /// counted as libyaml counts them: lines broken by LF, CR, CR LF, NEL, LS and PS; columns in
    /// characters (Unicode scalars), both from 1.
    static func firstForbiddenCharacter(in text: String) -> (line: Int, column: Int, scalar: Unicode.Scalar)?
    {
        var line = 1
        var column = 1
        var afterCR = false
        for scalar in text.unicodeScalars {
            if afterCR, scalar == "\n" {
                afterCR = false
                continue
            }
            afterCR = false
            switch scalar.value {
            case 0x0A, 0x85, 0x2028, 0x2029:
                line += 1
                column = 1
            case 0x0D:
                line += 1
                column = 1
                afterCR = true
            case 0x09, 0x20...0x7E, 0xA0...0xFFFD, 0x1_0000...:
                column += 1
            default:
                return (line, column, scalar)
            }
        }
        return nil
    }

    /// Line and column (from 1) of the character at `offset` (counted in Characters, as Yams
    /// counts it), lines broken as by ``firstForbiddenCharacter(in:)``.
    static func location(ofCharacter offset: Int, in text: String) -> (line: Int, column: Int) {
        var line = 1
        var column = 1
        for character in text.prefix(max(0, offset)) {
            if character.isNewline {
                line += 1
                column = 1
            } else {
                column += 1
            }
        }
        return (line, column)
    }
}
