/// What ends the pages by a page's own fields (`stopWhen`), and the check that a stop rule's
/// pointer matches something: a pointer that matches nothing ends the pages at once, and a
/// listing of thousands stopped after its first page, ok (trial HH2: `{"false": "/has_more"}`
/// on a body without it; `{"empty": "/rows"}` on a body that is the array itself).
extension Paginator {
    /// How a page's fields (``PaginationRule/stopWhenEmpty``, ``PaginationRule/stopWhenFalse``,
    /// ``PaginationRule/stopAtTotal``) judge the pages.
    enum FieldStop: Equatable {
        /// The pages go on.
        case goOn
        /// A field ends them: an empty array, a `false` or `null` flag, the total reached.
        case end
        /// A stop rule's pointer matched nothing in the page: `stopWhen.KEY` and its pointer.
        case unmatched(rule: String, pointer: String)
    }

    /// Whether `document`'s fields end the pages; counts the items seen for `stopAtTotal`.
    mutating func fieldStop(_ document: JSONNode?) -> FieldStop {
        guard rule.stopWhenEmpty != nil || rule.stopWhenFalse != nil || rule.stopAtTotal != nil
        else { return .goOn }
        guard let document else { return .end }  // an empty body: no page to go on from
        if let pointer = rule.stopWhenEmpty {
            switch JSONPointer.resolve(pointer, in: document)?.value {
            case .array(let items)? where !items.isEmpty: break
            case .array?, .null?: return .end
            case nil: return .unmatched(rule: "empty", pointer: pointer)
            default: return .end
            }
        }
        if let pointer = rule.stopWhenFalse {
            switch JSONPointer.resolve(pointer, in: document)?.value {
            case .bool(true)?: break
            case nil: return .unmatched(rule: "false", pointer: pointer)
            default: return .end
            }
        }
        if let pointer = rule.stopAtTotal {
            let itemsPointer = rule.items ?? rule.stopWhenEmpty ?? ""
            if case .array(let items)? = JSONPointer.resolve(itemsPointer, in: document)?.value {
                itemsSeen += items.count
                if items.isEmpty { return .end }
            }
            switch JSONPointer.resolve(pointer, in: document)?.value {
            case .number(let total)?: if Double(itemsSeen) >= total { return .end }
            case nil: return .unmatched(rule: "total", pointer: pointer)
            default: return .end
            }
        }
        return .goOn
    }

    /// A stop rule whose pointer matched nothing on the first page, while the response names
    /// a next page by the rule's `next`: the pointer is wrong (on a later page a missing field
    /// may be how the last page says so, as the rule had matched before). Fails the pages
    /// rather than end them after one.
    func unmatchedStop(
        _ rule: String, pointer: String, nextStep: String?
    ) throws(PaginationError) {
        guard pages == 1, nextStep != nil else { return }
        // The next page's URL is not shown: a server's link may carry a key the caller sent.
        let hint = rule == "false" ? "" : " (a body that is the array of items is at \"\")"
        throw PaginationError(
            message:
                "stopWhen.\(rule): the first page has no value at \(pointer), yet it names a next page: the pointer matches nothing in this API's pages, and the pages would end after one; check it\(hint)"
        )
    }
}
