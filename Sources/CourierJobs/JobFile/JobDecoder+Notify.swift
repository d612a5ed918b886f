import Courier
import Foundation

/// `notify`: where the run pings when it starts and ends (``NotifySettings``).
extension JobDecoder {
    /// Every URL is a secret, whether written in the file or read from `${env:…}` or
    /// `${file:…}`: messages about one never quote it.
    static func decodeNotify(_ node: JSONNode, context: DecodingContext) -> NotifySettings? {
        guard var reader = NodeReader(node, path: "notify", keys: JobKeys.notify, context: context)
        else { return nil }
        defer { reader.rejectUnknownKeys() }
        var settings = NotifySettings()
        func url(_ key: String) -> String? {
            let errorsBefore = context.errors.count
            guard let text = reader.string(key) else { return nil }
            // A reference that could not be read (`${file:$CREDENTIALS_DIRECTORY/…}` outside
            // systemd) has said so: its placeholder is no URL to judge.
            guard context.errors.count == errorsBefore else { return nil }
            context.addSecret(text)
            let probe = text.replacingOccurrences(
                of: NotifySettings.exitCodePlaceholder, with: "0")
            guard Origin.httpURL(probe) != nil else {
                reader.fail(
                    key,
                    "expected an absolute http or https URL (not shown: a ping URL is a secret)",
                    at: reader.take(key)!)
                return nil
            }
            if key == "ping" || key == "start", text.contains(NotifySettings.exitCodePlaceholder) {
                reader.fail(
                    key,
                    "\(NotifySettings.exitCodePlaceholder) is replaced only in \"success\" and \"failure\" URLs",
                    at: reader.take(key)!)
                return nil
            }
            return text
        }
        settings.ping = url("ping")
        settings.start = url("start")
        settings.success = url("success")
        settings.failure = url("failure")
        if let timeout = reader.number(
            "timeout", range: 1...60, what: "seconds from 1 to 60")
        {
            settings.timeout = timeout
        }
        let given = ["ping", "start", "success", "failure"].filter { reader.take($0) != nil }
        guard !given.isEmpty else {
            context.error(
                "notify",
                "expected \"ping\", or one or more of \"start\", \"success\", \"failure\"",
                at: node)
            return nil
        }
        for secret in settings.secrets { context.addSecret(secret) }
        return settings
    }
}
