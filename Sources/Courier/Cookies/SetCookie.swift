import Foundation

/// Parses `Set-Cookie` field values into cookies, by RFC 6265 sections 5.2 and 5.3.
enum SetCookie {
    /// The longest name plus value kept; browsers keep at least 4096 bytes per cookie.
    static let maxBytes = 4096

    /// The cookie a `Set-Cookie` value asks to store for a response from `url` at `now`, or
    /// `nil` when the rules say to ignore it. An already expired cookie is returned: storing it
    /// deletes the stored one of the same name, domain and path.
    static func parse(_ header: String, from url: URL, at now: Date) -> Cookie? {
        guard let host = url.host?.lowercased() else { return nil }
        var parts = header.split(separator: ";", omittingEmptySubsequences: false)[...]
        guard let pair = parts.popFirst(), let equals = pair.firstIndex(of: "=") else { return nil }
        let name = pair[..<equals].trimmingCharacters(in: .whitespaces)
        let value = pair[pair.index(after: equals)...].trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty, name.utf8.count + value.utf8.count <= maxBytes else { return nil }

        var cookie = Cookie(
            name: name, value: value, domain: host, path: CookieRules.defaultPath(url),
            created: now)
        var maxAge: Date?
        var expires: Date?
        var domainAttribute: String?
        for attribute in parts {
            let (key, attributeValue) = split(attribute)
            switch key {
            case "expires": expires = CookieDate.parse(attributeValue) ?? expires
            case "max-age":
                if let seconds = Int(attributeValue) {
                    maxAge = seconds <= 0 ? .distantPast : now.addingTimeInterval(Double(seconds))
                }
            case "domain":
                let domain = attributeValue.lowercased()
                if !domain.isEmpty {
                    domainAttribute = domain.hasPrefix(".") ? String(domain.dropFirst()) : domain
                }
            case "path":
                cookie.path =
                    attributeValue.hasPrefix("/") ? attributeValue : CookieRules.defaultPath(url)
            case "secure": cookie.secure = true
            case "httponly": cookie.httpOnly = true
            default: break
            }
        }
        cookie.expires = maxAge ?? expires
        if let domain = domainAttribute, domain != host {
            guard !CookieRules.isPublicSuffix(domain), CookieRules.domainMatches(host, domain)
            else {
                return nil
            }
            cookie.domain = domain
            cookie.hostOnly = false
        }
        // RFC 6265bis: a plain-http response cannot set a Secure cookie.
        if cookie.secure, url.scheme?.lowercased() != "https" { return nil }
        return cookie
    }

    /// The cookies of every `Set-Cookie` field. A transport that joins repeated fields with
    /// ", " (FoundationNetworking does) is split back apart: a comma starts a new cookie only
    /// when `name=` follows it, which an `Expires` date's comma never is.
    static func values(_ fields: [String]) -> [String] {
        fields.flatMap { field -> [String] in
            guard field.contains(",") else { return [field] }
            var values: [String] = []
            var current = ""
            for piece in field.split(separator: ",", omittingEmptySubsequences: false) {
                if !current.isEmpty, startsCookie(piece) {
                    values.append(current)
                    current = ""
                } else if !current.isEmpty {
                    current += ","
                }
                current += piece
            }
            values.append(current)
            return values.map { $0.trimmingCharacters(in: .whitespaces) }
        }
    }

    private static func startsCookie(_ piece: Substring) -> Bool {
        let head = piece.drop { $0 == " " }.prefix { $0 != ";" }
        guard let equals = head.firstIndex(of: "=") else { return false }
        let name = head[..<equals]
        return !name.isEmpty && !name.contains(" ")
    }

    private static func split(_ attribute: Substring) -> (String, String) {
        guard let equals = attribute.firstIndex(of: "=") else {
            return (attribute.trimmingCharacters(in: .whitespaces).lowercased(), "")
        }
        return (
            attribute[..<equals].trimmingCharacters(in: .whitespaces).lowercased(),
            attribute[attribute.index(after: equals)...].trimmingCharacters(in: .whitespaces)
        )
    }
}
