import Courier
import Foundation

/// `courier replay --dry-run`: the plan, as lines or as a bash script of curl commands.
extension ReplayCommand {
    static func printPlan(
        _ tasks: [ExpandedTask], curl: Bool, secrets: Set<String>, console: Console,
        notes: [String: String] = [:], pending: Int = 0, rebuilt: Int = 0
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
            // After the script's first lines (``replayFromLogs``).
            for note in formatter.notes { console.output(note) }
            for line in formatter.tokenCommands { console.output(line) }
            for task in tasks {
                let origin = task.replayOf.map { " (run \($0.run))" } ?? ""
                // One comment line, whatever the id holds: a newline in a captured value
                // would end the comment, and bash would run the rest (trial K).
                console.output(
                    "# \(task.id)\(origin)\(notes[task.id] ?? "")".showingControlCharacters)
                console.output(formatter.command(for: task.request))
            }
        } else {
            for task in tasks {
                let origin = task.replayOf.map { "\treplay of \($0.run)/\($0.task)" } ?? ""
                console.output(
                    "\(task.id)\t\(task.request.method) \(task.request.displayURL.absoluteString)\(origin)\(notes[task.id] ?? "")"
                        .showingControlCharacters)
            }
        }
        // `pending`: tasks said above, sent once what they take is captured again.
        let count = tasks.count + pending
        // Tasks the job builds again as their inputs come: their number of requests is known
        // only then (trial Z read "1 request" and saw 28 go).
        let later =
            rebuilt == 0
            ? ""
            : " and the tasks of \(rebuilt) line\(rebuilt == 1 ? "" : "s") above that the job builds again as their inputs are captured (not counted; those done before are not sent)"
        // A listing's pages after the one it goes on from are known only as it runs (trial DD
        // read "1 request" and saw 5 pages go).
        let pages =
            tasks.contains { $0.paginate != nil }
            ? " (a paginated task counts one: its later pages are not counted)" : ""
        let summary =
            "courier: \(count) request\(count == 1 ? "" : "s") to replay\(pages)\(later); dry run, nothing sent"
        // A script's stdout is the script (`… --format curl > retry.sh`): the count goes to
        // stderr, where bash never reads it.
        if curl { console.error(summary) } else { console.output(summary) }
    }

    /// A dry run's plan, printed, and its exit status: `tasks` as the replay sends them, the
    /// job's swapped writes it sends besides (``swappedWrites(of:besides:writes:)``), with
    /// what each note says.
    static func dryRun(
        _ tasks: [ExpandedTask], selected: [LogLine], job: Job?, jobTasks: [String: ExpandedTask],
        again: [ExpandedTask]?, counts: (pending: Int, rebuilt: Int, refused: Int),
        options: Options, console: Console, secrets: Set<String>
    ) -> Int32 {
        var tasks = tasks
        let (pending, rebuilt, refused) = counts
        var swapped: [ExpandedTask] = []
        if let job, let writes = options.run.writes {
            swapped = swappedWrites(
                of: job, besides: Set(selected.compactMap(\.task)), writes: writes)
            tasks += swapped
        }
        var notes =
            job.map {
                planWithJob(
                    &tasks, job: $0, jobTasks: jobTasks, again: again ?? [])
            } ?? [:]
        for task in swapped {
            notes[task.id] =
                "\t(not among the night's failures: its id now sends another task's request, which the night did not make; ids swapped since?)"
        }
        if let job { addConditions(&tasks, job: job, notes: notes) }
        printPlan(
            tasks, curl: options.curlFormat, secrets: secrets, console: console,
            notes: job.map { withSaves(notes, of: tasks, job: $0) } ?? notes,
            pending: pending, rebuilt: rebuilt)
        return refused > 0
            ? CommandLineInterface.ExitCode.taskFailed : CommandLineInterface.ExitCode.success
    }

    /// The job's writes not among `selected` that the replay sends all the same, as its run
    /// does (``TaskSelection/choosesSwapped``): each now sends another task's request the
    /// night did not make, and nothing holds it (trial XXX: the dry run said "0 requests").
    static func swappedWrites(of job: Job, besides selected: Set<String>, writes: WriteHistory)
        -> [ExpandedTask]
    {
        guard writes.knowsRequests else { return [] }
        return TaskExpander(job: job).compactMap { built -> ExpandedTask? in
            guard case .success(let task) = built, !selected.contains(task.id),
                WriteRule.keying(task, in: job) != nil,
                WriteRule.sentByAnother(task, job: job.name, writes: writes),
                WriteRule.doneAsAnother(
                    task.id, digest: task.writeDigest, job: job.name, writes: writes) == nil,
                WriteRule.held(task, in: job, writes: writes, named: []) == nil
            else { return nil }
            return task
        }
    }

    /// A dry run with `--job`: `tasks` as the replay sends them, and a note for each that
    /// differs from its logged request. The capturing tasks it sends though not chosen
    /// (`again`, ``ReplayProducerPlan``) come first, for what the chosen ones may need; a
    /// paginated task goes on from its checkpoint.
    static func planWithJob(
        _ tasks: inout [ExpandedTask], job: Job, jobTasks: [String: ExpandedTask],
        again: [ExpandedTask]
    ) -> [String: String] {
        var notes: [String: String] = [:]
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

    /// `notes` with where each task saves before its note, as `run --dry-run` says it (trial
    /// CCC: the replay's plan did not).
    static func withSaves(_ notes: [String: String], of tasks: [ExpandedTask], job: Job)
        -> [String: String]
    {
        var notes = notes
        for task in tasks {
            guard let save = task.save else { continue }
            notes[task.id] = "\t-> \(job.outputDir)/\(save)" + (notes[task.id] ?? "")
        }
        return notes
    }

    /// The conditions (`If-None-Match`, `If-Modified-Since`) the replay adds to a
    /// conditional task's first page from the job's state, as the run adds them: the script
    /// left them out (trial M). A task that goes on from a checkpoint (`notes`) asks for a
    /// later page, with none.
    static func addConditions(_ tasks: inout [ExpandedTask], job: Job, notes: [String: String]) {
        guard tasks.contains(where: \.conditional) else { return }
        // Read only: a plan writes nothing, so the state is never flushed.
        let state = ConditionalState(outputDir: job.outputDir) { _ in }
        for index in tasks.indices where tasks[index].conditional && notes[tasks[index].id] == nil {
            let task = tasks[index]
            guard let save = task.savePath(page: task.paginate.map { _ in 1 }) else { continue }
            JobRunner.askIfChanged(&tasks[index].request, of: task, state: state, save: save)
        }
    }

    /// What a dry run or a replay from logs does with one selected line.
    enum LinePlan {
        case send(ExpandedTask)
        /// Said on the plan's line for the task; `sent`: it is sent once what it takes is
        /// captured again, and counted; `rebuilt`: its requests are known only when the job
        /// builds it again (a fan-out's children), counted apart.
        case note(String, sent: Bool, rebuilt: Bool = false)
        case refused(ReplayBuilder.Refusal)
    }

    /// The plan for `line`: as the job builds it (a held write now named), not sent (a write
    /// the history holds, or what it takes captured by one), rebuilt from its logged request,
    /// or left for when its inputs run again.
    static func plan(
        _ line: LogLine, builder: ReplayBuilder, jobTasks: [String: ExpandedTask], job: Job?,
        producers: ReplayProducerPlan?, options: Options
    ) -> LinePlan {
        let id = line.task ?? ""
        // A write a repair held, now named: the replay sends it as the job builds it.
        if line.errorKind == LogErrorKind.writeHeld, let built = jobTasks[id],
            held(line, built: built, job: job, options: options) == nil
        {
            return .send(built)
        }
        // A write's start alone (its run killed under way) is refused, as the replay refuses
        // it (trial DDD: the plan said to name it, and the replay refused it).
        if line.event == LogEvent.requestStart, jobTasks[id] == nil,
            case .failure(let refusal) = builder.build(line)
        {
            return .refused(refusal)
        }
        if options.dryRun, let reason = held(line, built: jobTasks[id], job: job, options: options)
        {
            return .note("(not sent: \(reason))", sent: false)
        }
        let spec = job.flatMap { jobTasks[id]?.spec(in: $0) }
        if let spec, let reason = producers?.heldInput(of: spec) {
            return .note("(not sent: \(reason))", sent: false)
        }
        // With --job, the task is sent as the job builds it now, not as it was logged: the
        // plan and the script showed the old request (trial L: a URL fixed since, a POST the
        // job no longer makes).
        // (A task that takes a value captured again is said so below.)
        let waits = spec.flatMap { producers?.capturedAgain($0) } != nil
        if job != nil, !waits, let built = jobTasks[id] { return .send(built) }
        // Not built by a job that builds every task up front (no fan-out, no captured value):
        // the replay refuses it, and so does its plan.
        if let job, !waits, line.outcome != LogOutcome.skipped.rawValue,
            !job.tasks.contains(where: \.isDependent)
        {
            if isDoneWindow(id, of: job) {
                return .note("(not sent: its window was fetched since)", sent: false)
            }
            return .refused(
                ReplayBuilder.Refusal(
                    task: id,
                    reason: "the job no longer builds this task (its spec changed or is gone)"))
        }
        switch builder.build(line) {
        case .success(let task):
            return .send(task)
        case .failure(let refusal):
            // A dry run with --job: what it takes is captured again first (a token in its
            // path, say), or it is rebuilt when its inputs run again.
            if let spec, let inputs = producers?.capturedAgain(spec) {
                return .note("(sent once \(inputs) is captured again)", sent: true)
            }
            // A replay with --job sends the job's task as the job builds it now, whatever its
            // logged request was (a secret captured then, redacted in the log, differs now).
            if job != nil {
                return .note(
                    "(rebuilt from the job when the tasks it needs run again: a fan-out child or a skipped task)",
                    sent: false, rebuilt: true)
            }
            return .refused(refusal)
        }
    }
}
