import Courier
import Foundation

/// `save` and `conditional`: where a successful body goes, and whether to fetch it only when
/// it changed.
extension TaskDecoder {
    mutating func readSave() -> String? {
        let saveNode = reader.take("save")
        let save = reader.string("save")
        if let save, let saveNode {
            checkVariables(save, key: "save", at: saveNode)
            if let problem = OutputPath.problem(with: save) {
                reader.fail("save", problem, at: saveNode)
            }
        }
        return save
    }

    mutating func readConditional(save: String?) -> Bool {
        let conditionalNode = reader.take("conditional")
        let conditional = reader.bool("conditional") ?? false
        if conditional, save == nil, let conditionalNode {
            reader.fail(
                "conditional",
                "needs \"save\": the validators belong to a saved output", at: conditionalNode)
        }
        return conditional
    }

    /// `prune`: `true` or `"list"`, or `"move"`, on a task that fans out over a capture and
    /// saves each child's output in a file of its own, or on a paginated task that saves each
    /// page in a file of its own (`{page}`): the files this run did not write are the items, or
    /// the pages, the listing no longer has.
    /// - Parameter incremental: the task lists only what changed (`since`, `window`).
    mutating func readPrune(save: String?, fansOut: Bool, incremental: Bool) -> PruneMode? {
        guard let pruneNode = reader.take("prune") else { return nil }
        let mode: PruneMode?
        switch pruneNode.value {
        case .bool(true), .string("list"): mode = .list
        case .string("move"): mode = .move
        case .bool(false): mode = nil
        default:
            reader.fail(
                "prune", "expected true, \"list\" or \"move\", found \(pruneNode.value.typeName)",
                at: pruneNode)
            return nil
        }
        guard mode != nil else { return nil }
        if !fansOut && !paginated {
            reader.fail(
                "prune",
                "needs a task that fans out over a capture (\"foreach\": {\"id\": {\"capture\": \"ids\"}}), whose parent's listing says which items still exist, or a paginated task saving each page (\"save\": \"pages/{page}.json\")",
                at: pruneNode)
        } else if save == nil {
            reader.fail("prune", "needs \"save\" (a file per item or per page)", at: pruneNode)
        } else if paginated && incremental {
            reader.fail(
                "prune",
                "cannot follow an incremental listing (since, window): it lists only what changed, so every other page would look gone",
                at: pruneNode)
        }
        return mode
    }

    /// `prune` with `conditional` on a paginated task: each 304 asked for page 1 alone, so
    /// pages 2+ looked gone and were moved aside, and the next run fetched them again
    /// (trial M).
    mutating func refusePrunedConditionalListing(at node: JSONNode) {
        context.error(
            "\(path).prune",
            "cannot be combined with conditional on a paginated task: a 304 asks for page 1 alone, so every later page would look gone",
            at: node)
    }
}
