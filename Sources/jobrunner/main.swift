import JobRunnerCLI

await JobRunnerCommand.runMain()
