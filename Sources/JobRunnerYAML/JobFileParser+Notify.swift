import Foundation
import JobRunnerCore

extension JobFileParser {
    /// Reads one `notify:` hook (SPEC 5.13): `on`, `jobs`, `run`, `timeout`, `retry.attempts`.
    /// The names in `jobs:` are checked once every file's jobs are known.
    mutating func parseNotify(_ entry: Entry) -> (hook: NotifyHook, jobMarks: [(String, SourceLocation)])? {
        let name = entry.key
        guard let entries = reader.entries(entry.value, what: "notify.\(name)") else { return nil }
        let keys = reader.known(entries, as: NotifyKey.self, in: "notify.\(name)")
        var on: Set<NotifyHook.On> = [.failure]
        if let node = keys[.on]?.value, let list = reader.stringList(node, what: "notify.\(name).on") {
            on = []
            for (text, item) in list {
                if let value = NotifyHook.On(rawValue: text) {
                    on.insert(value)
                } else {
                    let names = NotifyHook.On.allCases.map(\.rawValue)
                    reader.error(
                        item,
                        "notify.\(name).on must list \(names.joined(separator: ", ")), not \(VisibleText.quoted(text))\(Suggestion.hint(for: text, in: names))"
                    )
                }
            }
        }
        var jobMarks: [(String, SourceLocation)]?
        if let node = keys[.jobs]?.value, let list = reader.stringList(node, what: "notify.\(name).jobs") {
            jobMarks = list.map { ($0.0, reader.location($0.1)) }
        }
        if keys[.plugin] != nil, keys[.run] != nil {
            reader.error(
                entry.keyNode,
                "notify hook \(VisibleText.quoted(name)) has both 'run' and 'plugin'; keep one of them")
            return nil
        }
        if let plugin = keys[.plugin] {
            reader.error(
                plugin.keyNode,
                "notify hook \(VisibleText.quoted(name)): plugin hooks are not supported by this build; use run: with a command"
            )
            return nil
        }
        guard let run = keys[.run] else {
            reader.error(
                entry.keyNode, "notify hook \(VisibleText.quoted(name)) needs run: (the command to run)")
            return nil
        }
        guard let command = parseRun(run.value) else { return nil }
        var hook = NotifyHook(
            name: name, on: on, jobs: jobMarks?.map(\.0), command: command,
            location: reader.location(entry.keyNode))
        if let node = keys[.timeout]?.value,
            let timeout = reader.duration(node, what: "notify.\(name).timeout", allowZero: false)
        {
            hook.timeout = timeout
        }
        if let retry = keys[.retry],
            let retryEntries = reader.entries(retry.value, what: "notify.\(name).retry")
        {
            let retryKeys = reader.known(retryEntries, as: NotifyRetryKey.self, in: "notify.\(name).retry")
            if let node = retryKeys[.attempts]?.value,
                let attempts = reader.int(node, what: "notify.\(name).retry.attempts", range: 1...100)
            {
                hook.attempts = attempts
            }
        }
        return (hook, jobMarks ?? [])
    }
}

/// The keys of a hook's `retry:`: only the number of attempts.
enum NotifyRetryKey: Int, FileKey {
    case attempts
    static let names = ["attempts"]
    static let byName = table()
}
