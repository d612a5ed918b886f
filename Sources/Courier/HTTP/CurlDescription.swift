import Foundation

extension HTTPRequest {
    /// A `curl` command line that sends this request, to paste into a terminal or a bug report.
    ///
    /// Secret header values (``SecretHeaders`` and ``secretHeaderNames``), secret query values
    /// and URL passwords appear as `<redacted>` unless `revealingSecrets` is true. Words are
    /// single-quoted for POSIX shells; a body that is not UTF-8 text is left out with a note.
    /// ```swift
    /// print(request.cURLDescription())
    /// // curl -X 'POST' 'https://api.example.com/v1/notes' -H 'Authorization: <redacted>' …
    /// ```
    public func cURLDescription(revealingSecrets: Bool = false) -> String {
        var words = ["curl", "-X", Self.shellQuote(method.rawValue)]
        words.append(Self.shellQuote((revealingSecrets ? url : displayURL).absoluteString))
        let shown = revealingSecrets ? headers : redactedHeaders
        for field in shown {
            words += ["-H", Self.shellQuote("\(field.name): \(field.value)")]
        }
        words += tlsWords(revealingSecrets: revealingSecrets)
        if let body, !body.isEmpty {
            if let text = String(data: body, encoding: .utf8), !text.contains("\0") {
                words += ["--data-binary", Self.shellQuote(text)]
            } else {
                words.append("# (\(body.count) bytes of binary body not shown)")
            }
        }
        if let streamedBody {
            if let file = streamedBody.onlyFile {
                // `@` makes curl read the file itself, as this request would.
                words += ["--data-binary", Self.shellQuote("@" + file.path)]
            } else {
                words.append(
                    "# (\(streamedBody.summary), not shown)")
            }
        }
        return words.joined(separator: " ")
    }

    /// curl's flags for ``validatesTLS`` and ``tls``; the key passphrase is a secret.
    private func tlsWords(revealingSecrets: Bool) -> [String] {
        var words: [String] = []
        if !validatesTLS { words.append("--insecure") }
        if let bundle = tls.caBundle { words += ["--cacert", Self.shellQuote(bundle.path)] }
        if let certificate = tls.clientCertificate {
            words += ["--cert", Self.shellQuote(certificate.path)]
        }
        if let key = tls.clientKey { words += ["--key", Self.shellQuote(key.path)] }
        if let passphrase = tls.clientKeyPassphrase {
            words += ["--pass", Self.shellQuote(revealingSecrets ? passphrase : "<redacted>")]
        }
        if !tls.pinnedPublicKeys.isEmpty {
            words += [
                "--pinnedpubkey", Self.shellQuote(tls.pinnedPublicKeys.joined(separator: ";")),
            ]
        }
        if let minimum = tls.minimumVersion { words.append("--tlsv\(minimum.rawValue)") }
        return words
    }

    /// `text` as one single-quoted POSIX shell word.
    static func shellQuote(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }
}
