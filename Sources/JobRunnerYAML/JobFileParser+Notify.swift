import Foundation
import JobRunnerCore

extension JobFileParser {
    /// Reads one `notify:` hook (SPEC 5.13): `on`, `jobs`, `run` or `plugin` (with `with` and
    /// `isolation`), `timeout`, `retry.attempts`.
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
        var hook: NotifyHook
        if let plugin = keys[.plugin] {
            guard let text = reader.nonEmptyString(plugin.value, what: "notify.\(name).plugin") else {
                return nil
            }
            guard let parts = Self.pluginPair(text), Self.isValidName(parts.plugin),
                Self.isValidName(parts.handler)
            else {
                reader.error(
                    plugin.value,
                    "notify.\(name).plugin must be written as <plugin>.<handler>, like mail.send, not \(VisibleText.quoted(text))"
                )
                return nil
            }
            hook = NotifyHook(
                name: name, on: on, jobs: jobMarks?.map(\.0),
                command: .plugin(plugin: parts.plugin, handler: parts.handler),
                location: reader.location(entry.keyNode))
            hook.pluginLocations = PluginLocations(plugin: reader.location(plugin.value))
            if let node = keys[.with]?.value {
                if reader.tree.kind(node) == .mapping, case .object(let object) = reader.json(node) {
                    hook.parameters = object
                    hook.pluginLocations?.parameters = reader.location(node)
                } else if !reader.isNull(node) {
                    reader.error(node, "notify.\(name).with must be a map of parameter names to values")
                }
            }
            if let node = keys[.isolation]?.value,
                let isolation = reader.choice(node, what: "notify.\(name).isolation", as: Isolation.self)
            {
                hook.isolation = isolation
            }
        } else {
            guard let run = keys[.run] else {
                reader.error(
                    entry.keyNode,
                    "notify hook \(VisibleText.quoted(name)) needs run: (a command) or plugin: (name.handler)"
                )
                return nil
            }
            for key in [NotifyKey.with, .isolation] {
                if let extra = keys[key] {
                    reader.error(
                        extra.keyNode,
                        "notify hook \(VisibleText.quoted(name)): \(NotifyKey.names[key.rawValue]) applies to plugin hooks only; this one runs a command"
                    )
                }
            }
            guard let command = parseRun(run.value) else { return nil }
            hook = NotifyHook(
                name: name, on: on, jobs: jobMarks?.map(\.0), command: command,
                location: reader.location(entry.keyNode))
        }
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
