import Courier
import Foundation

/// `idempotencyKey` and `safe`: whether the task is a write that must happen once, and the
/// header its key goes in (``WriteSettings``).
extension TaskDecoder {
    mutating func readWrites(method: HTTPMethod) -> WriteSettings {
        var settings = WriteSettings()
        settings.safe = reader.bool("safe")
        guard let keyNode = reader.take("idempotencyKey") else { return settings }
        switch keyNode.value {
        case .bool(true): settings.keyHeader = "Idempotency-Key"
        case .bool(false): return settings
        case .object:
            guard
                var keyReader = NodeReader(
                    keyNode, path: "\(path).idempotencyKey", keys: JobKeys.idempotencyKey,
                    context: context)
            else { return settings }
            let header = keyReader.string("header", required: true)
            keyReader.rejectUnknownKeys()
            guard let header else { return settings }
            if !HTTPMethod(header).isValidToken {
                keyReader.fail("header", "\"\(header)\" is not a valid header name", at: keyNode)
                return settings
            }
            if SecretHeaders.isSecret(header) {
                keyReader.fail(
                    "header",
                    "\"\(header)\" is a secret header, redacted in every log line: the key could not be read back; name another",
                    at: keyNode)
                return settings
            }
            settings.keyHeader = header
        default:
            reader.fail(
                "idempotencyKey",
                "expected true, false or {\"header\": NAME}, found \(keyNode.value.typeName)",
                at: keyNode)
            return settings
        }
        if let problem = Self.keyProblem(
            method: method, safe: settings.safe == true, paginated: paginated)
        {
            reader.fail("idempotencyKey", problem, at: keyNode)
        }
        return settings
    }

    /// Why a task cannot have an idempotency key, if it cannot.
    static func keyProblem(method: HTTPMethod, safe: Bool, paginated: Bool) -> String? {
        if method == .get || method == .head {
            return
                "a \(method) is sent again safely; an idempotency key is for a request that changes something (POST, PATCH, PUT, DELETE)"
        }
        if safe {
            return "a \"safe\" request changes nothing on the server and needs no idempotency key"
        }
        if paginated {
            return
                "the pages of a paginated task would share one key; a listing is a read (mark it \"safe\": true)"
        }
        return nil
    }
}
