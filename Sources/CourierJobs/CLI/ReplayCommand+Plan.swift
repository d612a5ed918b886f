import Courier
import Foundation

/// `courier replay --dry-run`: the plan, as lines or as a bash script of curl commands.
extension ReplayCommand {
    static func printPlan(
        _ tasks: [ExpandedTask], curl: Bool, secrets: Set<String>, console: Console,
        notes: [String: String] = [:]
    ) {
        if curl {
            // An OAuth2 task's token is asked for when it is sent: the script asks for one.
            let tokens = CurlCommand.AccessToken.variables(for: tasks.compactMap(\.oauth2))
            var tasks = tasks
            for index in tasks.indices {
                guard let token = tokens.first(where: { $0.client == tasks[index].oauth2 })
                else { continue }
                tasks[index].request.headers.replaceOrAdd(
                    "Authorization", "Bearer \(token.placeholder)")
            }
            let formatter = CurlCommand(
                secrets: secrets, environment: ProcessInfo.processInfo.environment,
                requests: tasks.map(\.request), accessTokens: tokens)
            for note in formatter.notes { console.output(note) }
            for line in formatter.tokenCommands { console.output(line) }
            for task in tasks {
                let origin = task.replayOf.map { " (run \($0.run))" } ?? ""
                console.output("# \(task.id)\(origin)\(notes[task.id] ?? "")")
                console.output(formatter.command(for: task.request))
            }
        } else {
            for task in tasks {
                let origin = task.replayOf.map { "\treplay of \($0.run)/\($0.task)" } ?? ""
                console.output(
                    "\(task.id)\t\(task.request.method) \(task.request.displayURL.absoluteString)\(origin)\(notes[task.id] ?? "")"
                )
            }
        }
        let summary =
            "courier: \(tasks.count) request\(tasks.count == 1 ? "" : "s") to replay; dry run, nothing sent"
        // A script's stdout is the script (`… --format curl > retry.sh`): the count goes to
        // stderr, where bash never reads it.
        if curl { console.error(summary) } else { console.output(summary) }
    }

    /// A dry run with `--job`: `tasks` as the replay sends them, and a note for each that
    /// differs from its logged request. The capturing tasks it sends though not chosen come
    /// first, for what the chosen ones may need; a paginated task goes on from its checkpoint.
    static func planWithJob(
        _ tasks: inout [ExpandedTask], job: Job, jobTasks: [String: ExpandedTask],
        chosen: Set<String>, okRuns: [UInt64: String]
    ) -> [String: String] {
        var notes: [String: String] = [:]
        let again = ResumePlan.capturingTasksSentAgain(job, chosen: chosen, okRuns: okRuns)
        for task in again {
            let names = task.spec(in: job)?.captures.map(\.name) ?? []
            notes[task.id] =
                "\t(not chosen, sent again: it captures \(names.joined(separator: ", ")), which no earlier run kept)"
        }
        tasks = again + tasks
        for index in tasks.indices {
            let built = jobTasks[tasks[index].id] ?? tasks[index]
            guard built.paginate != nil, built.spec(in: job)?.hasCaptures == false,
                let (page, run, next) = ResumePlan.checkpoint(of: built, job: job)
            else { continue }
            tasks[index].request = next
            notes[tasks[index].id] =
                "\t(goes on from page \(page): its checkpoint, kept by run \(run))"
        }
        return notes
    }
}
