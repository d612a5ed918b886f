import Courier
import Foundation

/// The job's transport settings: `http2`, and `tls` (whom to trust, who we are).
extension JobDecoder {
    /// `http2` and `tls`, each checked against the backend that would apply it.
    static func decodeTransport(
        _ reader: inout NodeReader, file: URL, backend: Backend, context: DecodingContext
    ) -> (http2: Bool, tls: TLSOptions) {
        let http2 = reader.bool("http2") ?? false
        if http2, backend == .urlsession, let node = reader.take("http2") {
            reader.fail(
                "http2",
                "the urlsession backend cannot be told to use HTTP/2 (FoundationNetworking chooses by itself); use \"backend\": \"curl\"",
                at: node)
        }
        let tls =
            reader.take("tls").flatMap {
                decodeTLS(
                    $0, jobFolder: file.deletingLastPathComponent(), backend: backend,
                    context: context)
            } ?? TLSOptions()
        return (http2, tls)
    }

    /// `hostThrottle`: `true` (the default) or `false`, or `"shared"`: on, and shared with the
    /// user's other courier processes. Whether it is on, and whether it is shared.
    static func decodeHostThrottle(_ reader: inout NodeReader) -> (on: Bool, shared: Bool) {
        guard let node = reader.take("hostThrottle") else { return (true, false) }
        switch node.value {
        case .bool(let on): return (on, false)
        case .string("shared"): return (true, true)
        default:
            reader.fail(
                "hostThrottle",
                "expected true, false or \"shared\", found \(reader.describe(node))", at: node)
            return (true, false)
        }
    }

    /// `tls`: the files are relative to the job file's folder; the key's passphrase is a
    /// secret like any `${env:…}` value. Refused with the URLSession backend, which cannot
    /// apply any of it on Linux (it would fail every request).
    static func decodeTLS(
        _ node: JSONNode, jobFolder: URL, backend: Backend, context: DecodingContext
    ) -> TLSOptions? {
        guard var reader = NodeReader(node, path: "tls", keys: JobKeys.tls, context: context)
        else { return nil }
        func file(_ key: String) -> URL? {
            guard let path = reader.string(key) else { return nil }
            let url =
                path.hasPrefix("/")
                ? URL(fileURLWithPath: path) : jobFolder.appendingPathComponent(path)
            if let problem = FileSystem.notRegularFile(url) {
                reader.fail(key, problem, at: reader.take(key)!)
            }
            return url
        }
        var options = TLSOptions()
        options.caBundle = file("caBundle")
        options.clientCertificate = file("clientCertificate")
        options.clientKey = file("clientKey")
        if let passphrase = reader.string("clientKeyPassphrase") {
            options.clientKeyPassphrase = passphrase
            context.addSecret(passphrase)
        }
        if let node = reader.take("pinnedPublicKeys") {
            if case .array(let items) = node.value,
                case let pins = items.compactMap({ item -> String? in
                    guard case .string(let pin) = item.value, pin.hasPrefix("sha256//") else {
                        return nil
                    }
                    return pin
                }), pins.count == items.count, !pins.isEmpty
            {
                options.pinnedPublicKeys = pins
            } else {
                reader.fail(
                    "pinnedPublicKeys",
                    "expected a non-empty array of pins, each \"sha256//\" and a base64 SHA-256",
                    at: node)
            }
        }
        options.minimumVersion = reader.choice("minimumVersion", of: TLSOptions.Version.self)
        reader.rejectUnknownKeys()
        if backend == .urlsession, !options.isDefault {
            context.error(
                "tls",
                "the urlsession backend cannot apply TLS options on Linux; use \"backend\": \"curl\"",
                at: node)
        }
        return options
    }
}
