/// Terminal output made HTML: SGR colour and style sequences become `<span>`s with classes
/// (`fg-1`, `bg-4`, `b`, `d`, `i`, `u`), every other escape sequence is dropped, and other control
/// characters are shown as their Unicode control pictures. `app.js` renders what it appends to a
/// followed log the same way, starting from ``classes`` (the page's `data-sgr`).
struct ANSIRenderer {
    /// The style in force: foreground and background colour (0…15) and attributes.
    private var foreground: Int?
    private var background: Int?
    private var bold = false
    private var dim = false
    private var italic = false
    private var underline = false
    /// Whether a `<span>` is open.
    private var open = false

    init() {}

    /// Starts from the style named by `classes` (what ``classes`` gave).
    init(classes: String) {
        for name in classes.split(separator: " ") {
            switch name {
            case "b": bold = true
            case "d": dim = true
            case "i": italic = true
            case "u": underline = true
            default:
                if name.hasPrefix("fg-") { foreground = Int(name.dropFirst(3)) }
                if name.hasPrefix("bg-") { background = Int(name.dropFirst(3)) }
            }
        }
    }

    /// The classes of the style in force, space-separated; empty for none.
    var classes: String {
        var names: [String] = []
        if let foreground { names.append("fg-\(foreground)") }
        if let background { names.append("bg-\(background)") }
        if bold { names.append("b") }
        if dim { names.append("d") }
        if italic { names.append("i") }
        if underline { names.append("u") }
        return names.joined(separator: " ")
    }

    /// Appends `text` as HTML.
    mutating func render(_ text: String, into html: inout HTML) {
        if open == false, !classes.isEmpty { openSpan(into: &html) }
        var run = ""
        let scalars = Array(text.unicodeScalars)
        var index = 0
        func flush() {
            if !run.isEmpty {
                html.text(run)
                run = ""
            }
        }
        while index < scalars.count {
            let scalar = scalars[index]
            switch scalar.value {
            case 0x1B:
                flush()
                index = escape(scalars, at: index, into: &html)
                continue
            case 0x0A, 0x09:
                run.unicodeScalars.append(scalar)
            case 0x0D:
                // A carriage return alone (progress bars) would overwrite in a terminal; in a page
                // the line goes on.
                break
            case 0x00..<0x20:
                run.unicodeScalars.append(Unicode.Scalar(0x2400 + scalar.value) ?? "?")
            case 0x7F:
                run += "␡"
            case 0x80..<0xA0:
                run += "�"
            default:
                run.unicodeScalars.append(scalar)
            }
            index += 1
        }
        flush()
    }

    /// Closes the open span.
    mutating func finish(into html: inout HTML) {
        if open { html.raw("</span>") }
        open = false
    }

    /// Reads the escape sequence at `start` (an ESC); returns the index after it.
    private mutating func escape(_ scalars: [Unicode.Scalar], at start: Int, into html: inout HTML) -> Int {
        var index = start + 1
        guard index < scalars.count else { return index }
        switch scalars[index] {
        case "[":
            // CSI: parameters and intermediates up to a final byte in @…~.
            index += 1
            var parameters = ""
            while index < scalars.count, !(0x40...0x7E).contains(scalars[index].value) {
                parameters.unicodeScalars.append(scalars[index])
                index += 1
            }
            guard index < scalars.count else { return index }
            if scalars[index] == "m" { select(parameters, into: &html) }
            return index + 1
        case "]", "P", "_", "^":
            // OSC and other strings: up to BEL or ESC \.
            index += 1
            while index < scalars.count {
                if scalars[index] == "\u{07}" { return index + 1 }
                if scalars[index] == "\u{1B}" {
                    return index + 1 < scalars.count && scalars[index + 1] == "\\" ? index + 2 : index + 1
                }
                index += 1
            }
            return index
        default:
            return index + 1
        }
    }

    /// Applies an SGR sequence's parameters.
    private mutating func select(_ parameters: String, into html: inout HTML) {
        let before = classes
        let codes = parameters.split(separator: ";", omittingEmptySubsequences: false).map { Int($0) ?? 0 }
        var index = 0
        while index < codes.count {
            let code = codes[index]
            switch code {
            case 0: reset()
            case 1: bold = true
            case 2: dim = true
            case 3: italic = true
            case 4: underline = true
            case 22:
                bold = false
                dim = false
            case 23: italic = false
            case 24: underline = false
            case 30...37: foreground = code - 30
            case 39: foreground = nil
            case 40...47: background = code - 40
            case 49: background = nil
            case 90...97: foreground = code - 90 + 8
            case 100...107: background = code - 100 + 8
            case 38, 48:
                // 256 colours (5;N): the first 16 as classes; the rest, and 24-bit colours (2;R;G;B),
                // have no class and are left as they were (a page's CSP allows no inline style).
                if index + 2 < codes.count, codes[index + 1] == 5 {
                    let value = codes[index + 2]
                    if value < 16 {
                        if code == 38 { foreground = value } else { background = value }
                    }
                    index += 2
                } else if index + 1 < codes.count, codes[index + 1] == 2 {
                    index += 4
                }
            default: break
            }
            index += 1
        }
        guard classes != before else { return }
        finish(into: &html)
        if !classes.isEmpty { openSpan(into: &html) }
    }

    private mutating func reset() {
        foreground = nil
        background = nil
        bold = false
        dim = false
        italic = false
        underline = false
    }

    private mutating func openSpan(into html: inout HTML) {
        html.raw("<span class=\"" + classes + "\">")
        open = true
    }
}
