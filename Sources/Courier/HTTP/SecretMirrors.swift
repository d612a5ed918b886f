import Foundation

// What `dump`, debuggers and Mirror-walking loggers show of the values that carry secrets: the
// stored fields, with each secret redacted as the values' descriptions redact it. A mirror of
// the stored values would print an `Authorization` field, a `.query` API key in a URL, or a
// client key's passphrase (trial II: `dump(error)` of an `APIError` showed its request's
// `Authorization`).

extension HTTPHeaders: CustomReflectable {
    /// The fields, secret values (``SecretHeaders/alwaysSecret``, and the names its request
    /// marked) redacted.
    public var customMirror: Mirror {
        Mirror(
            self, children: ["fields": SecretHeaders.redacting(self, marked: markedSecret).fields],
            displayStyle: .struct)
    }
}

extension HTTPRequest: CustomReflectable {
    /// The request's fields, with its URL as ``displayURL``, its headers as
    /// ``redactedHeaders`` and a secret body (``bodyIsSecret``) left out.
    public var customMirror: Mirror {
        let shownBody: Any = bodyIsSecret && body != nil ? SecretHeaders.placeholder : body as Any
        return Mirror(
            self,
            children: [
                "url": displayURL, "method": method, "headers": redactedHeaders, "body": shownBody,
                "streamedBody": streamedBody as Any, "timeout": timeout as Any,
                "validatesTLS": validatesTLS, "tls": tls, "bodyDestination": bodyDestination,
                "secretHeaderNames": secretHeaderNames, "secretQueryNames": secretQueryNames,
                "bodyIsSecret": bodyIsSecret,
            ], displayStyle: .struct)
    }
}

extension TLSOptions: CustomReflectable {
    /// The options, the client key's passphrase redacted.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "caBundle": caBundle as Any, "clientCertificate": clientCertificate as Any,
                "clientKey": clientKey as Any,
                "clientKeyPassphrase": clientKeyPassphrase.map { _ in SecretHeaders.placeholder }
                    as Any,
                "pinnedPublicKeys": pinnedPublicKeys, "minimumVersion": minimumVersion as Any,
            ], displayStyle: .struct)
    }
}
