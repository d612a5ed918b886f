import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A paginated task's checkpoints (``ListingCheckpoint``): written after each page that leads
/// to another, read by `--resume` and `replay --job` to go on from the page after the last
/// one kept, and removed once the task ends `ok`.
extension JobRunner {
    /// A paginated task's checkpoints as its pages go, held across the loop's awaits.
    final class Listing {
        /// The task's first request, hashed (``ListingCheckpoint/fingerprint(of:)``).
        let first: String
        /// The checkpoint found or written last: the next one replaces it, and its listing
        /// file goes once the new one names another.
        var last: ListingCheckpoint?
        /// Whether this run wrote a checkpoint for the task: its listing file then stays
        /// when the task fails, for a resume.
        var wrote = false
        /// The task's checkpoint could not be read (a later format): it is left as it is.
        var blocked = false
        /// The task's checkpoint could not be read (not one Courier wrote), or this run's
        /// could not be written (a secret in its next link): the listing files earlier runs
        /// left are unknown, so the task's others go once it has its own, or ends ok.
        var sweeps = false

        init(first: String) { self.first = first }
    }

    /// The task's checkpoints, when it keeps them: a paginated task, unless it is
    /// `conditional` (its first page asks whether anything changed, so its pages go
    /// together) or captures values for other tasks (those are kept whole or not at all,
    /// ``KeptCaptures``).
    func listing(of task: ExpandedTask, capturing: Bool) -> Listing? {
        guard task.paginate != nil, !task.conditional, !capturing else { return nil }
        return Listing(
            first: ListingCheckpoint.fingerprint(of: task.request, records: task.records))
    }

    /// For `--resume` and `replay --job`: moves `cursor` to the page after the task's
    /// checkpoint, and starts the task's records part with the records of the pages before.
    /// A checkpoint that does not fit (the task asks for something else now, its records are
    /// gone) is left, and the task starts at page 1. Any other run only learns of the
    /// checkpoint, which its own replace, or its end removes.
    @inline(never)
    func resumeListing(
        _ listing: Listing, of task: ExpandedTask, cursor: PageCursor, part: RecordsPart?,
        log: RunLog
    ) async {
        guard let rule = task.paginate else { return }
        let id = task.id
        let found = await files.run { [listings] in listings.read(task: id) }
        guard let found else { return }
        let checkpoint: ListingCheckpoint
        switch found {
        case .success(let read): checkpoint = read
        case .failure(let problem):
            // A later Courier's is left as it is (and no checkpoint of this task is written);
            // anything else is replaced by the task's next checkpoint.
            listing.blocked = problem.isLaterFormat
            listing.sweeps = !problem.isLaterFormat
            let fate =
                problem.isLaterFormat
                ? "it is left as it is, and no checkpoint of the task is kept"
                : "the task's next checkpoint replaces it"
            note(
                "task \(id): \(listings.url(for: id).path): \(problem.reason); the task starts at page 1, and \(fate)"
            )
            return
        }
        listing.last = checkpoint
        guard options.history != nil else { return }
        guard checkpoint.first == listing.first else {
            note(
                "task \(id) asks for another first page, or keeps its records otherwise, than the run that left its checkpoint; it starts at page 1"
            )
            return
        }
        var earlier: URL?
        if part != nil {
            guard let records = checkpoint.records else { return }
            let url = recordsStore.root.appendingPathComponent(records.file)
            let merged = task.records.flatMap { $0.rule.write == .merge ? $0.path : nil }
            let (digest, older) = await files.run { [recordsStore] in
                (
                    RecordsListingFile.digest(of: url, length: records.bytes),
                    merged.map { recordsStore.isOlder(url, than: $0) } ?? false
                )
            }
            guard let digest, RecordsStore.hex(digest.hash) == records.hash,
                digest.lines == records.count
            else {
                note(
                    "task \(id): the records of its first \(Self.pages(checkpoint.pages.pages)) are gone or changed since its checkpoint; it starts at page 1"
                )
                return
            }
            // Merged over the file a later run wrote, they could undo its newer records
            // (trial PP: a night's update went back to a backfill's kept page).
            guard !older else {
                note(
                    "task \(id): the records of its first \(Self.pages(checkpoint.pages.pages)), kept by run \(checkpoint.run), are older than their file, which a later run wrote; it starts at page 1"
                )
                return
            }
            earlier = url
        }
        guard
            let (paginator, request) = try? Paginator.resuming(
                checkpoint.pages, rule: rule, first: task.request)
        else { return }
        if let part, let earlier, let records = checkpoint.records {
            part.resume(from: earlier, bytes: records.bytes, count: records.count)
        }
        cursor.position.paginator = paginator
        cursor.position.request = request
        if let since = checkpoint.since { cursor.position.sinceValue = since }
        cursor.page = checkpoint.pages.pages + 1
        let done = checkpoint.pages.pages
        note(
            "task \(id) goes on from page \(done + 1): \(done == 1 ? "page 1 was" : "pages 1-\(done) were") kept by run \(checkpoint.run)"
        )
    }

    /// `page` or `N pages`.
    static func pages(_ count: Int) -> String { count == 1 ? "page" : "\(count) pages" }

    /// After a good page that leads to another, once its line is logged (and handed to the
    /// system: a page the checkpoint covers is never without its line, even after a kill -9):
    /// the task's records so far made durable, then its checkpoint written, then the listing
    /// file the one before named removed. A checkpoint that cannot be written, or would hold a
    /// secret (a next link carrying an API key), is not: a resume then goes on from the one
    /// before, or from page 1. The file work runs on a file-work thread, as a save's does.
    @inline(never)
    func checkpoint(
        _ listing: Listing, of task: ExpandedTask, cursor: PageCursor, part: RecordsPart?,
        log: RunLog
    ) async {
        guard !listing.blocked, let pages = cursor.position.paginator?.checkpoint else { return }
        let (id, run, first, since) = (task.id, log.run, listing.first, cursor.position.sinceValue)
        let redactor = log.redactor
        let written = await files.run { [listings, temporaries] () -> ListingCheckpoint? in
            log.flush()
            do {
                let records = try part?.checkpoint(temporaries: temporaries)
                let checkpoint = ListingCheckpoint(
                    task: id, run: run, first: first, pages: pages, since: since,
                    records: records)
                let bytes = checkpoint.bytes
                guard redactor.scrubJSON(bytes) == bytes else { return nil }
                try listings.write(checkpoint, temporaries: temporaries)
                return checkpoint
            } catch {
                return nil
            }
        }
        guard let written else {
            // No checkpoint names this run's listing file, nor an earlier one's: those of
            // killed runs go when the task ends ok (trial GGG: a listing whose next links
            // carry a secret left a killed run's file for good).
            listing.sweeps = true
            return
        }
        let isFirst = !listing.wrote
        let superseded = listing.last?.records?.file
        listing.last = written
        listing.wrote = true
        // The listing file the checkpoint replaced (an earlier run's), or the task's others
        // when the one before could not be read, go once this one stands.
        guard isFirst else { return }
        if let part, listing.sweeps {
            await files.run { part.removeOtherListings() }
        } else if let superseded, superseded != written.records?.file {
            let url = recordsStore.root.appendingPathComponent(superseded)
            await files.run { _ = unlink(url.path) }
        }
    }

    /// The task ended `ok`, its records part in place: its checkpoint goes (or the file that
    /// was not one), and the listing file an earlier run left.
    @inline(never)
    func listingDone(_ listing: Listing, of task: ExpandedTask, part: RecordsPart?) async {
        guard !listing.blocked, listing.last != nil || listing.sweeps else { return }
        let (id, sweeps) = (task.id, listing.sweeps)
        let earlier = listing.last?.records.map {
            recordsStore.root.appendingPathComponent($0.file)
        }
        await files.run { [listings] in
            listings.remove(task: id)
            // This run's own was renamed into place; an earlier run's goes.
            if let earlier { _ = unlink(earlier.path) }
            if sweeps { part?.removeOtherListings() }
        }
    }

    /// A note on stderr, unless `--quiet`.
    private func note(_ text: String) {
        guard !options.quiet else { return }
        console.error("courier: \(job.name): \(text)")
    }
}
