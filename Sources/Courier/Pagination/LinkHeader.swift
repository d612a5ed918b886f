import Foundation

/// The `Link` header field of RFC 8288: `<uri>; rel="next"; title="…", <uri2>; rel="last"`.
package enum LinkHeader {
    /// The target of the first link whose `rel` holds `relation` (case-insensitive), resolved
    /// against `base`.
    package static func target(of relation: String, in fields: [String], base: URL) -> URL? {
        for field in fields {
            for link in links(in: field) where link.relations.contains(relation.lowercased()) {
                if let url = URL(string: link.target, relativeTo: base)?.absoluteURL { return url }
            }
        }
        return nil
    }

    /// Each `<target>; params` of a field, with its `rel` values lowercased.
    package static func links(in field: String) -> [(target: String, relations: [String])] {
        var links: [(String, [String])] = []
        var rest = Substring(field)
        while let open = rest.firstIndex(of: "<"), let close = rest[open...].firstIndex(of: ">") {
            let target = String(rest[rest.index(after: open)..<close])
            rest = rest[rest.index(after: close)...]
            // Parameters run to the next link: a comma outside quotes.
            var parameters = ""
            var quoted = false
            while let character = rest.first {
                if character == "\"" { quoted.toggle() }
                if character == ",", !quoted { break }
                parameters.append(character)
                rest = rest.dropFirst()
            }
            var relations: [String] = []
            for parameter in parameters.split(separator: ";") {
                let parts = parameter.split(separator: "=", maxSplits: 1)
                guard parts.count == 2,
                    parts[0].trimmingCharacters(in: .whitespaces).lowercased() == "rel"
                else { continue }
                let value = parts[1].trimmingCharacters(in: .whitespaces)
                    .trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                relations += value.lowercased().split(separator: " ").map(String.init)
            }
            links.append((target, relations))
        }
        return links
    }
}
