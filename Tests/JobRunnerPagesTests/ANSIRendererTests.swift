import Testing

@testable import JobRunnerPages

@Suite("ANSI colours in logs")
struct ANSIRendererTests {
    func render(_ text: String) -> String {
        var html = HTML()
        var renderer = ANSIRenderer()
        renderer.render(text, into: &html)
        renderer.finish(into: &html)
        return html.text
    }

    @Test("SGR colours and styles become spans with classes; reset closes them")
    func colours() {
        #expect(render("\u{1B}[31mred\u{1B}[0m plain") == "<span class=\"fg-1\">red</span> plain")
        #expect(render("\u{1B}[1;94;42mx") == "<span class=\"fg-12 bg-2 b\">x</span>")
        #expect(render("\u{1B}[38;5;3my\u{1B}[39mz") == "<span class=\"fg-3\">y</span>z")
        #expect(render("\u{1B}[38;2;1;2;3mtrue\u{1B}[m") == "true")
    }

    @Test("other sequences are dropped and control characters shown as pictures, text escaped")
    func others() {
        #expect(render("a\u{1B}[2Jb\u{1B}]0;title\u{07}c") == "abc")
        #expect(render("tab\tnul\u{0}cr\r\n") == "tab\tnul␀cr\n")
        #expect(render("<b>&</b>") == "&lt;b&gt;&amp;&lt;/b&gt;")
        #expect(render("\u{1B}[31m<i>") == "<span class=\"fg-1\">&lt;i&gt;</span>")
    }

    @Test("the style at the end is what a follower starts from")
    func carriesStyle() {
        var html = HTML()
        var renderer = ANSIRenderer()
        renderer.render("\u{1B}[4;33mwarn", into: &html)
        #expect(renderer.classes == "fg-3 u")
        var next = HTML()
        var follower = ANSIRenderer(classes: renderer.classes)
        follower.render("ing", into: &next)
        follower.finish(into: &next)
        #expect(next.text == "<span class=\"fg-3 u\">ing</span>")
    }
}

@Suite("A log read while it is written")
struct UnfinishedUTF8Tests {
    @Test("the bytes of a character cut at the end are left for the follower")
    func cut() {
        let euro = Array("€".utf8)  // 3 bytes
        #expect(LogReader.unfinishedUTF8(Array("ab".utf8)) == 0)
        #expect(LogReader.unfinishedUTF8(Array("a".utf8) + euro) == 0)
        #expect(LogReader.unfinishedUTF8(Array("a".utf8) + euro.prefix(2)) == 2)
        #expect(LogReader.unfinishedUTF8(Array("a".utf8) + euro.prefix(1)) == 1)
        #expect(LogReader.unfinishedUTF8([]) == 0)
    }
}
