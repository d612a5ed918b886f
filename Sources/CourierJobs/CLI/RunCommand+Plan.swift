import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `courier run --dry-run`: what the run would send, and nothing sent.
extension RunCommand {
    /// Prints the plan: a resume's (``ResumePlan``) or the whole job's, `{since}` from the
    /// kept cursors, read as the run reads them (nothing is written, no lock is taken).
    /// Returns `false` when `--task` is known to choose no task (the run would exit 2).
    static func printDryRun(_ job: Job, total: Int, options: RunOptions, console: Console)
        -> Bool
    {
        var cursors: [String: String] = [:]
        if job.tasks.contains(where: { $0.since != nil }) {
            let url = SinceState.location(outputDir: job.outputDir)
            switch SinceState.load(url) {
            case .success(let kept):
                cursors = SinceState.view(of: kept, job: job, shard: options.shard)
            case .failure(let problem):
                console.error(
                    "courier: \(job.name): warning: \(url.relativePath): \(problem.reason); the plan shows every since task from its start value, as the run would"
                )
            }
        }
        if let resume = options.resume {
            ResumePlan.print(
                job, cursors: cursors, resume: resume, options: options, console: console)
            return true
        }
        return printPlan(job, cursors: cursors, total: total, options: options, console: console)
    }

    /// How a paginated task goes on, in words: its pages are unknown before sending.
    static func describe(_ rule: PaginationRule) -> String {
        let next: String
        switch rule.next {
        case .linkHeader(let relation): next = "the Link header's rel=\(relation)"
        case .jsonURL(let pointer): next = "the URL at \(pointer)"
        case .cursor(let pointer, let parameter): next = "?\(parameter)= the cursor at \(pointer)"
        case .page(let parameter, let start):
            next = "?\(parameter)= as written (page \(start)), then \(start + 1), \(start + 2), …"
        case .offset(let parameter, let step):
            next = "?\(parameter)= as written (0), then \(step), \(2 * step), …"
        case .bodyCursor(let pointer, let field):
            next = "body \(field) = the cursor at \(pointer)"
        case .bodyPage(let field, let start):
            next = "body \(field) = as written (page \(start)), then \(start + 1), \(start + 2), …"
        case .bodyOffset(let field, let step):
            next = "body \(field) = as written (0), then \(step), \(2 * step), …"
        case .headerURL(let name): next = "the URL in the \(name) header"
        case .headerParameter(let name, let parameter):
            next = "?\(parameter)= the \(name) header's value"
        }
        let stop =
            rule.stopWhenEmpty.map { " until \($0.isEmpty ? "the body" : $0) is empty" } ?? ""
        return "(pages by \(next)\(stop), at most \(rule.maxPages))"
    }

    /// The expanded tasks, one per line, secrets scrubbed and control characters shown as
    /// `\u{1B}` (a task id from a lines file must not drive the terminal); nothing is sent. A
    /// task that fans out over a capture is one line saying so, its values coming only while
    /// running; with `--task`, the children kept values make are listed one by one. Returns
    /// `false` when `--task` is known to choose nothing: the run would exit 2.
    @discardableResult
    static func printPlan(
        _ job: Job, cursors: [String: String], total: Int, options: RunOptions, console: Console
    ) -> Bool {
        var (shown, inShard, onEveryShard, unknownFanOuts) = (0, 0, 0, 0)
        let kept = keptFanOutChildren(job, options: options, redactor: console.redactor)
        /// Fan-out lines for the specs before `end` not shown yet.
        func fanOuts(upTo end: Int) -> Bool {
            while shown < end {
                let spec = job.tasks[shown]
                shown += 1
                guard spec.captureSource != nil else { continue }
                // `--task`: the children kept values make, when the run makes them so.
                if let children = kept[shown - 1] {
                    for child in children {
                        inShard += 1
                        let line = sendLine(child, spec: spec, job: job, options: options)
                        guard console.output(line.showingControlCharacters) else { return false }
                    }
                    continue
                }
                // `--task`: a fan-out whose ids could match one of the globs.
                if !mayChoose(spec, options: options) { continue }
                unknownFanOuts += 1
                guard console.output(fanOutLine(spec, job: job).showingControlCharacters)
                else { return false }
            }
            return true
        }
        let needed = ResumePlan.neededProducers(job, options: options)
        for case .success(let task) in TaskExpander(job: job, cursors: cursors) {
            // A job's expansion gives every task its spec.
            guard let index = task.specIndex, let spec = task.spec(in: job) else { continue }
            guard fanOuts(upTo: index) else { return true }
            shown = max(shown, index + 1)
            let capturing = spec.hasCaptures
            if let shard = options.shard, !shard.runs(taskID: task.id, capturing: capturing) {
                continue
            }
            // `--task`: the chosen tasks, and those that capture what they may need.
            let isChosen = ResumePlan.chosen(task.id, options: options)
            if !isChosen, !(capturing && needed.contains(index)) { continue }
            if let line = keptInstead(task, capturing: capturing, job: job, options: options) {
                guard console.output(line.showingControlCharacters) else { return true }
                continue
            }
            let everyShard = options.shard != nil && capturing
            inShard += 1
            if everyShard { onEveryShard += 1 }
            let line = sendLine(
                task, spec: spec, job: job, options: options, everyShard: everyShard)
            // A reader that went away (`| head`) ends the listing: a plan can be 10^9 lines.
            guard console.output(line.showingControlCharacters) else { return true }
        }
        guard fanOuts(upTo: job.tasks.count) else { return true }
        // `--task` that chooses nothing, all its fan-outs' children known: the run exits 2.
        if !options.only.isEmpty, options.shard == nil, inShard == 0, unknownFanOuts == 0 {
            return false
        }
        console.output(
            planSummary(
                // `--task`: the tasks listed as sent, as the run counts them (the chosen ones
                // and those sent for what they capture).
                job, total: options.only.isEmpty ? total : inShard,
                inShard: (inShard, onEveryShard),
                options: options, keptFanOuts: Set(kept.keys)))
        return true
    }

    /// A task's line in the plan: its request, pages, output and notes, or why it is not sent
    /// (a write the history holds, ``WriteRule``).
    static func sendLine(
        _ task: ExpandedTask, spec: TaskSpec, job: Job, options: RunOptions,
        everyShard: Bool = false
    ) -> String {
        if let writes = options.writes,
            let reason = WriteRule.held(task, in: job, writes: writes, named: options.named)
        {
            return "\(task.id)\t(not sent: \(reason))"
        }
        var line =
            "\(task.id)\t\(task.request.method) \(showingInputs(task.request.displayURL.absoluteString, of: spec))"
        if everyShard { line += "\t(on every shard: its captures feed each shard's children)" }
        if let rule = task.paginate { line += "\t" + describe(rule) }
        if let save = task.save { line += "\t-> \(job.outputDir)/\(save)" }
        return line + describeRecords(of: task, job: job) + notes(spec)
    }

    /// The line of a fan-out whose children come only as the run captures their values.
    static func fanOutLine(_ spec: TaskSpec, job: Job) -> String {
        let capture = spec.captureSource?.capture ?? "?"
        let producer = job.tasks.first { $0.captures.contains { $0.name == capture } }
        var line =
            "\(spec.id) for each of \(capture) (captured by \(producer?.path ?? "?"))\t\(spec.method) \(describe(spec.target, baseURL: job.baseURL))\(describe(spec.query))"
        // Where each child's output lands, as its template says.
        if let save = spec.save {
            line += "\t-> \(job.outputDir)/\(Template.restoringBraces(save))"
        }
        if let records = spec.records {
            line +=
                "\t=> records \(records.write.rawValue) into \(job.outputDir)/\(Template.restoringBraces(records.to))"
        }
        return line + notes(spec)
    }

    /// `--task`: the line of a task that captures, not chosen, whose values a run kept: it is
    /// not sent, they stand in for it (``TaskSelection``); `nil` for any other task.
    static func keptInstead(
        _ task: ExpandedTask, capturing: Bool, job: Job, options: RunOptions
    ) -> String? {
        guard !options.only.isEmpty, capturing,
            !options.only.contains(where: { fnmatch($0, task.id, 0) == 0 }),
            let run = options.history?.okRuns[FNV1a.taskKey(job: job.name, task: task.id)],
            KeptCaptures.load(job: job, task: task.id, run: run) != nil
        else { return nil }
        return "\(task.id)\t(not sent: run \(run) kept what it captures)"
    }

    /// Whether `--task` (none: every task) could choose a task of `spec`: one of its globs
    /// matches the spec's id as a glob (`user-{id}` as `user-*`), or the other way round.
    static func mayChoose(_ spec: TaskSpec, options: RunOptions) -> Bool {
        options.only.isEmpty || ReplaySelection.mayChoose(spec, globs: options.only)
    }

    /// The plan's last line: how many tasks, where, how.
    /// `inShard`: the shard's tasks, and of them those every shard sends (they capture), so
    /// that the shards' counts add up to more than the job's.
    /// `keptFanOuts`: the fan-outs whose children kept values make, listed and counted.
    static func planSummary(
        _ job: Job, total: Int, inShard: (count: Int, everyShard: Int), options: RunOptions,
        keptFanOuts: Set<Int> = []
    ) -> String {
        let backend = options.backend ?? job.backend
        let fanOutCount = job.tasks.indices.filter {
            job.tasks[$0].captureSource != nil && mayChoose(job.tasks[$0], options: options)
                && !keptFanOuts.contains($0)
        }.count
        let more =
            fanOutCount > 0
            ? " (and the fan-out of \(fanOutCount) task\(fanOutCount == 1 ? "" : "s") over captures)"
            : ""
        let children =
            job.tasks.contains { $0.captureSource != nil }
            ? ", children of fan-outs split by their own ids" : ""
        let shared =
            inShard.everyShard > 0
            ? ", \(inShard.everyShard) of which every shard sends (they capture)" : ""
        let split =
            options.shard.map { " (shard \($0): \(inShard.count) of them\(shared)\(children))" }
            ?? ""
        return
            "courier: \(job.name): \(total) task\(total == 1 ? "" : "s")\(split)\(more) on \(backend.rawValue), concurrency \(options.concurrency ?? job.concurrency); dry run, nothing sent"
    }

    /// Where a task's records go, for the plan (`\t=> records merge into …`), or nothing.
    static func describeRecords(of task: ExpandedTask, job: Job) -> String {
        guard let records = task.records else { return "" }
        var text =
            "\t=> records \(records.rule.write.rawValue) into \(job.outputDir)/\(records.path)"
        if records.rule.csv != nil { text += " (and \(RecordsCSV.path(for: records.path)))" }
        return text
    }

    /// `url` with each capture `spec` takes, not known before running, shown as `{name}`
    /// (the URL holds it percent-encoded, `%7Bname%7D`).
    static func showingInputs(_ url: String, of spec: TaskSpec) -> String {
        spec.inputs.reduce(url) {
            $0.replacingOccurrences(of: "%7B\($1)%7D", with: "{\($1)}")
        }
    }

    /// What a spec captures and waits for, for the plan.
    static func notes(_ spec: TaskSpec) -> String {
        var notes: [String] = []
        if !spec.inputs.isEmpty {
            notes.append("uses " + spec.inputs.sorted().joined(separator: ", "))
        }
        if !spec.captures.isEmpty {
            notes.append("captures " + spec.captures.map(\.name).joined(separator: ", "))
        }
        return notes.isEmpty ? "" : "\t(" + notes.joined(separator: "; ") + ")"
    }

    /// A task's `query` as its template says (`?name=value&…`), or nothing.
    static func describe(_ query: [(name: String, value: String)]) -> String {
        guard !query.isEmpty else { return "" }
        return "?"
            + query.map {
                "\(Template.restoringBraces($0.name))=\(Template.restoringBraces($0.value))"
            }
            .joined(separator: "&")
    }

    /// A task's URL as its template says, the job's base joined to a path: the whole URL a
    /// child is sent to, with its `{variables}`.
    static func describe(_ target: TaskSpec.Target, baseURL: URL?) -> String {
        switch target {
        case .path(let path):
            var base = baseURL?.absoluteString ?? ""
            if base.hasSuffix("/"), path.hasPrefix("/") { base.removeLast() }
            return base + Template.restoringBraces(path)
        case .url(let url): return Template.restoringBraces(url)
        }
    }
}
