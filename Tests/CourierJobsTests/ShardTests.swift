import Testing

@testable import CourierJobs

/// `--shard I/N`: the split is disjoint, covers every task, is even, and never changes.
@Suite("shards")
struct ShardTests {
    static let ids = (1...10_000).map { "item-\($0)" }

    @Test("for N in 1…8, the shards of 10,000 tasks are disjoint, cover them all, and are even")
    func disjointCoverAndSpread() async throws {
        // Off the cooperative pool: 360,000 hashes in a debug build.
        let problems = try await OffPool.run { () -> [String] in
            var problems: [String] = []
            for count in 1...8 {
                let shards = (0..<count).map { Shard(index: $0, count: count)! }
                var sizes = Array(repeating: 0, count: count)
                for id in Self.ids {
                    let owners = shards.filter { $0.owns(taskID: id) }
                    if owners.count != 1 { problems.append("\(id), N=\(count): \(owners)") }
                    sizes[owners.first?.index ?? 0] += 1
                }
                if sizes.reduce(0, +) != Self.ids.count { problems.append("N=\(count): a gap") }
                let even = Double(Self.ids.count) / Double(count)
                if sizes.contains(where: { abs(Double($0) - even) > even * 0.05 }) {
                    problems.append("N=\(count): uneven sizes \(sizes)")
                }
            }
            return problems
        }
        #expect(problems == [])
    }

    @Test("the hash is FNV-1a 64 with MurmurHash3's finalizer: these values never change")
    func stable() {
        // Pinned: a change here moves tasks between shards of runs already under way.
        #expect(FNV1a.hash("".utf8) == 0xcbf2_9ce4_8422_2325)
        #expect(FNV1a.hash("a".utf8) == 0xaf63_dc4c_8601_ec8c)
        #expect(Shard.mix(0) == 0)
        #expect(
            (1...8).map { Shard.of(taskID: "user-\($0)", count: 4) } == Self.pinnedUsers)
    }

    // The same in a 10-line Python port of the hash, written from the definitions.
    static let pinnedUsers = [1, 3, 0, 2, 3, 2, 3, 2]

    @Test func parsing() {
        #expect(Shard("0/1") == Shard(index: 0, count: 1))
        #expect(Shard("3/4")?.description == "3/4")
        for bad in ["4/4", "-1/4", "1/0", "1", "a/b", "1/4/5", "", "1/100001", " 1/4"] {
            #expect(Shard(bad) == nil, "\(bad)")
        }
        #expect(Shard(index: 2, count: 4)?.fileTag == "shard-2-of-4")
    }

    @Test func kubernetesEnvironment() throws {
        #expect(
            try RunCommand.shardFromEnvironment([
                "JOB_COMPLETION_INDEX": "2", "JOB_COMPLETIONS": "5",
            ])
                == Shard(index: 2, count: 5))
        // The index alone (Kubernetes sets no JOB_COMPLETIONS): every pod would have run the
        // whole job (trial BB).
        let alone = #expect(throws: UsageError.self) {
            try RunCommand.shardFromEnvironment(["JOB_COMPLETION_INDEX": "2"])
        }
        #expect(alone?.message.contains("JOB_COMPLETIONS is not") == true)
        #expect(try RunCommand.shardFromEnvironment([:]) == nil)
        #expect(throws: UsageError.self) {
            try RunCommand.shardFromEnvironment([
                "JOB_COMPLETION_INDEX": "5", "JOB_COMPLETIONS": "5",
            ])
        }
    }

    @Test("a shared limit is divided among the shards; an unshared one is each shard's")
    func rateLimitShare() {
        var limit = RateLimitSettings(perSecond: 200, burst: 5, scope: .job)
        let fourth = Shard(index: 1, count: 4)
        #expect(limit.share(for: fourth) == limit, "not shared: every shard has the full rate")
        limit.shared = true
        let share = limit.share(for: fourth)
        #expect(share.perSecond == 50)
        #expect(share.burst == 2, "5 / 4 rounded up")
        #expect(limit.share(for: nil) == limit, "no shards: the whole rate")
        #expect(limit.share(for: Shard(index: 0, count: 1)) == limit)
        #expect(limit.share(for: Shard(index: 0, count: 100)).burst == 1, "at least one token")
    }

    @Test("a task that captures runs on every shard; the others on their own")
    func capturingTasksRunEverywhere() {
        let shards = (0..<4).map { Shard(index: $0, count: 4)! }
        #expect(shards.filter { $0.runs(taskID: "login", capturing: true) }.count == 4)
        #expect(shards.filter { $0.runs(taskID: "login", capturing: false) }.count == 1)
    }

    @Test("a template's measured size is its rendered size, without rendering")
    func renderedByteCount() {
        let template = Template("/u/{id}/{name}/{missing}é")
        for bindings in [
            ["id": "42", "name": "zoë"], [:], ["id": String(repeating: "x", count: 70_000)],
        ] {
            #expect(template.renderedByteCount(bindings) == template.render(bindings).utf8.count)
        }
    }
}

@Suite("template escapes")
struct TemplateEscapeTests {
    @Test("{{ writes {, the }} that closes it writes }, a lone }} stays")
    func escapes() {
        let bindings = ["name": "N", "id": "7"]
        #expect(Template("{{name}}").render(bindings) == "{name}")
        #expect(Template("{{name}}").variables.isEmpty)
        #expect(Template("{{{id}}}").render(bindings) == "{7}")
        #expect(
            Template("query { user(id: {id}) {{name}} }").render(bindings)
                == "query { user(id: 7) {name} }")
        #expect(Template(#"{"a": {"b": "{id}"}}"#).render(bindings) == #"{"a": {"b": "7"}}"#)
        #expect(Template("}}{id}").render(bindings) == "}}7")
        #expect(Template("{{").render(bindings) == "{")
        #expect(Template("{{+id}}").render(bindings) == "{+id}")
        #expect(Template("{id}").isOneVariable && !Template("{id}x").isOneVariable)
    }
}
