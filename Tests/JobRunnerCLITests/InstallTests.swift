// `stat` and `timespec`: with SwiftNIO in the build (the dashboard), their definitions are found in
// CDispatch's module, which MemberImportVisibility then asks to be imported.
import CDispatch
import Foundation
import Glibc
import Testing

/// `make install` and `make uninstall` into a DESTDIR, and the systemd unit of
/// `examples/periodic-refresh` against what they install: `systemd-analyze verify`, and its
/// command run as an unprivileged user on the example.
@Suite struct InstallTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path
    static let unitPath = repository + "/examples/periodic-refresh/jobrunner-refresh.service"

    /// What `make install` puts under DESTDIR with the default PREFIX, and where the symbolic link
    /// points.
    static let installed: Set<String> = [
        "usr/local/lib/jobrunner/jobrunner", "usr/local/lib/jobrunner/libnoop.so",
        "usr/local/lib/jobrunner/libfiles.so", "usr/local/lib/jobrunner/libhello.so",
        "usr/local/bin/jobrunner -> ../lib/jobrunner/jobrunner", "usr/local/share/man/man1/jobrunner.1",
        "usr/local/share/bash-completion/completions/jobrunner",
        "usr/local/share/zsh/site-functions/_jobrunner",
        "usr/local/share/fish/vendor_completions.d/jobrunner.fish",
    ]

    /// A fresh temporary folder, removed at the end.
    struct Folder: ~Copyable {
        let path: String
        init() throws {
            path =
                FileManager.default.temporaryDirectory.appendingPathComponent(
                    "jobrunner-install-\(UUID().uuidString)"
                ).path
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }
        deinit { try? FileManager.default.removeItem(atPath: path) }
    }

    /// Runs `program` to its end (`arguments`, in `directory`, with exactly `environment`).
    static func run(
        _ program: String, _ arguments: [String], in directory: String = repository,
        environment: [String: String]? = nil
    ) async throws -> Finished {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        if let environment { process.environment = environment }
        return try await runCollecting(process)
    }

    /// `make TARGET DESTDIR=…` on the jobrunner this suite tests (its build directory as BUILT),
    /// without building (`-o release -o manual`): a test may not run `swift build` beside the
    /// `swift test` that runs it. A stand-in manual page takes the generated one's place.
    static func make(_ target: String, destination: String) async throws -> Finished {
        let manual = destination + ".manual"
        try ".TH JOBRUNNER 1\n".write(toFile: manual, atomically: true, encoding: .utf8)
        var environment = ProcessInfo.processInfo.environment
        // A `make test` that runs this must not hand its own variables to this make.
        for name in ["MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "PREFIX", "DESTDIR"] {
            environment[name] = nil
        }
        let built = (PluginTests.realPath(jobrunnerBinary) as NSString).deletingLastPathComponent
        return try await run(
            "/usr/bin/env",
            [
                "make", "--no-print-directory", "-o", "release", "-o", "manual", target,
                "DESTDIR=" + destination,
                "BUILT=" + built, "MANUAL=" + manual,
            ],
            environment: environment)
    }

    /// Every file and symbolic link under `root`, relative to it (a link as `path -> target`).
    static func contents(of root: String) -> Set<String> {
        var found = Set<String>()
        let manager = FileManager.default
        for path in (try? manager.subpathsOfDirectory(atPath: root)) ?? [] {
            let full = root + "/" + path
            if let target = try? manager.destinationOfSymbolicLink(atPath: full) {
                found.insert("\(path) -> \(target)")
                continue
            }
            var isDirectory: ObjCBool = false
            if manager.fileExists(atPath: full, isDirectory: &isDirectory), !isDirectory.boolValue {
                found.insert(path)
            }
        }
        return found
    }

    @Test func makeInstallPutsTheBinaryPluginsManualAndCompletionsInPlaceAndUninstallTakesThemAway()
        async throws
    {
        let folder = try Folder()
        let destination = folder.path + "/root"
        let install = try await Self.make("install", destination: destination)
        #expect(install.status == 0, "\(install.stdout)\(install.stderr)")
        #expect(Self.contents(of: destination) == Self.installed)
        for (file, says) in [
            ("bash-completion/completions/jobrunner", "_jobrunner"),
            ("zsh/site-functions/_jobrunner", "#compdef jobrunner"),
            ("fish/vendor_completions.d/jobrunner.fish", "complete -c 'jobrunner'"),
        ] {
            let text =
                (try? String(contentsOfFile: destination + "/usr/local/share/" + file, encoding: .utf8)) ?? ""
            #expect(text.contains(says), "\(file): \(text.prefix(200))")
        }

        // The installed binary, called through its link from a folder of its own, finds the
        // example plugins beside its real path, and nothing else.
        let work = folder.path + "/work"
        try FileManager.default.createDirectory(atPath: work + "/jobs", withIntermediateDirectories: true)
        var environment = ProcessInfo.processInfo.environment
        environment["JOBRUNNER_PLUGIN_PATH"] = nil
        let plugins = try await Self.run(
            destination + "/usr/local/bin/jobrunner", ["plugins", "jobs"], in: work, environment: environment)
        #expect(plugins.status == 0, "\(plugins.stderr)")
        let library = destination + "/usr/local/lib/jobrunner"
        let listed = plugins.stdout.split(separator: "\n").map(String.init)
        for plugin in ["noop", "files", "hello"] {
            #expect(
                listed.contains { $0.hasPrefix(plugin + " ") && $0.hasSuffix("\(library)/lib\(plugin).so") },
                "\(plugins.stdout)")
        }
        #expect(!plugins.stdout.contains("not loadable"), "\(plugins.stdout)")
        #expect(listed.filter { $0.contains(".so") }.count == 3, "\(plugins.stdout)")

        let uninstall = try await Self.make("uninstall", destination: destination)
        #expect(uninstall.status == 0, "\(uninstall.stdout)\(uninstall.stderr)")
        #expect(Self.contents(of: destination).isEmpty, "left behind: \(Self.contents(of: destination))")
        #expect(!FileManager.default.fileExists(atPath: library))
    }

    /// The unit's settings, as `key`/`value` pairs in order.
    static func unitSettings() throws -> [(key: String, value: String)] {
        try String(contentsOfFile: unitPath, encoding: .utf8).split(separator: "\n").compactMap { line in
            guard !line.hasPrefix("#"), !line.hasPrefix("["), let equals = line.firstIndex(of: "=") else {
                return nil
            }
            return (String(line[..<equals]), String(line[line.index(after: equals)...]))
        }
    }

    @Test func theSystemdUnitPassesSystemdAnalyzeVerify() async throws {
        guard
            let analyze = ["/usr/bin/systemd-analyze", "/bin/systemd-analyze"].first(where: {
                FileManager.default.isExecutableFile(atPath: $0)
            })
        else {
            try Test.cancel(
                "systemd-analyze is not installed here (`make test` installs the systemd package when it is missing): the unit was not verified"
            )
        }
        let folder = try Folder()
        // Whether systemd-analyze can work in this container at all: a unit with nothing to find fault with.
        try "[Service]\nExecStart=/bin/true\n".write(
            toFile: folder.path + "/probe.service", atomically: true, encoding: .utf8)
        let probe = try await Self.run(analyze, ["verify", folder.path + "/probe.service"])
        if probe.status != 0 {
            try Test.cancel(
                "systemd-analyze verify cannot run here (it refused even a minimal unit: \(probe.stderr)): the unit was not verified"
            )
        }

        // The unit as written, once `make install` has put jobrunner where ExecStart looks (here
        // under a DESTDIR: the copy's ExecStart says where).
        let destination = folder.path + "/root"
        let install = try await Self.make("install", destination: destination)
        #expect(install.status == 0, "\(install.stdout)\(install.stderr)")
        let unit = try String(contentsOfFile: Self.unitPath, encoding: .utf8)
        let start = try #require(Self.unitSettings().first { $0.key == "ExecStart" }?.value)
        #expect(start.hasPrefix("/usr/local/bin/jobrunner "), "the path `make install` gives the binary")
        try unit.replacingOccurrences(
            of: "ExecStart=/usr/local/bin/jobrunner ",
            with: "ExecStart=\(destination)/usr/local/bin/jobrunner "
        )
        .write(toFile: folder.path + "/jobrunner-refresh.service", atomically: true, encoding: .utf8)
        let verify = try await Self.run(analyze, ["verify", folder.path + "/jobrunner-refresh.service"])
        #expect(
            verify.status == 0 && verify.stderr.isEmpty && verify.stdout.isEmpty,
            "\(verify.stdout)\(verify.stderr)")
    }

    /// The unit's ExecStart, with its WorkingDirectory and Environment, run as user `nobody` on the
    /// example laid out as the unit expects it, every absolute path under a temporary folder that
    /// stands for `/`: /srv/refresh (job files and world, the user's to read only) and
    /// /var/lib/jobrunner-refresh, the state directory systemd makes for the service's user.
    @Test func theUnitsCommandRunsTheExampleAsAnUnprivilegedUser() async throws {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"),
            getpwnam("nobody") != nil
        else {
            try Test.cancel(
                "needs root, /usr/bin/setpriv and a user nobody to run the unit's command as another user")
        }
        let folder = try Folder()
        let root = folder.path
        let install = try await Self.make("install", destination: root)
        #expect(install.status == 0, "\(install.stdout)\(install.stderr)")
        let example = Self.repository + "/examples/periodic-refresh"
        let manager = FileManager.default
        try manager.createDirectory(
            atPath: root + "/srv/refresh/world/upstream", withIntermediateDirectories: true)
        try manager.copyItem(atPath: example + "/jobs", toPath: root + "/srv/refresh/jobs")
        try "alpha\n".write(
            toFile: root + "/srv/refresh/world/upstream/a.txt", atomically: true, encoding: .utf8)
        try "beta\n".write(
            toFile: root + "/srv/refresh/world/upstream/b.txt", atomically: true, encoding: .utf8)
        #expect(manager.createFile(atPath: root + "/srv/refresh/world/online", contents: Data()))
        // What StateDirectory=jobrunner-refresh makes: the directory, owned by the service's user.
        let nobody = getpwnam("nobody").pointee
        let stateDirectory = root + "/var/lib/jobrunner-refresh"
        try manager.createDirectory(atPath: stateDirectory, withIntermediateDirectories: true)
        #expect(chown(stateDirectory, nobody.pw_uid, nobody.pw_gid) == 0)
        for directory in [root, root + "/var", root + "/var/lib", root + "/srv", root + "/srv/refresh"] {
            #expect(chmod(directory, 0o755) == 0)
        }

        let settings = try Self.unitSettings()
        func rooted(_ word: String) -> String { word.hasPrefix("/") ? root + word : word }
        let command = try #require(settings.first { $0.key == "ExecStart" }?.value)
            .split(separator: " ").map { rooted(String($0)) }
        let directory = try #require(settings.first { $0.key == "WorkingDirectory" }?.value)
        // A service's environment: systemd's PATH and LANG, then the unit's Environment= lines.
        var environment = [
            "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8",
        ]
        for setting in settings where setting.key == "Environment" {
            let parts = setting.value.split(separator: "=", maxSplits: 1).map(String.init)
            environment[parts[0]] = rooted(parts.count > 1 ? parts[1] : "")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        process.arguments =
            ["--reuid=\(nobody.pw_uid)", "--regid=\(nobody.pw_gid)", "--clear-groups", "--"] + command
        process.currentDirectoryURL = URL(fileURLWithPath: rooted(directory))
        process.environment = environment
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let lines = LineReader(out)
        let errors = LineReader(err)
        try process.run()
        let exit = ExitWatcher(process)
        // Each line about mirror in turn, until one says how its first occurrence ended (or that
        // it is blocked).
        var verdict: String?
        var count = 1
        while verdict == nil, await lines.waitFor(" mirror", times: count) {
            let line = lines.all.filter { $0.contains(" mirror") }[count - 1]
            if ["succeeded", "failed", "blocked"].contains(where: { line.contains($0) }) { verdict = line }
            count += 1
        }
        kill(process.processIdentifier, SIGTERM)
        let status = await exit.wait()
        #expect(
            verdict?.contains("succeeded   mirror @ ") == true,
            "stdout: \(lines.all) stderr: \(errors.all)")
        #expect(status == 0, "stdout: \(lines.all) stderr: \(errors.all)")
        #expect(!lines.all.contains { $0.contains("failed") || $0.contains("blocked") }, "\(lines.all)")

        // The mirror and the state are in the state directory, the user's; nothing was written
        // beside the job files.
        let mirrored = stateDirectory + "/mirror/b.txt"
        #expect((try? String(contentsOfFile: mirrored, encoding: .utf8)) == "beta\n")
        var info = stat()
        #expect(stat(mirrored, &info) == 0 && info.st_uid == nobody.pw_uid)
        #expect(stat(stateDirectory + "/state", &info) == 0 && info.st_uid == nobody.pw_uid)
        #expect(!manager.fileExists(atPath: root + "/srv/refresh/world/mirror"))
    }
}
