import Courier
import Foundation

/// A task's own `auth`: the job's forms, as templates, and the secrets it makes known.
extension TaskDecoder {
    mutating func readAuth() -> AuthForm? {
        let form = reader.take("auth").flatMap {
            JobDecoder.decodeAuth(
                $0, path: "\(path).auth", keys: JobKeys.taskAuth, context: context)
        }
        // `oauth2` holds no templates: its secrets are references, known already.
        let auth = form?.credentials
        for (key, text) in auth?.templates ?? [] where key != "name" {
            checkVariables(text, key: "auth.\(key)", at: nil)
            // A literal credential is a secret like the job's own; a template's values are
            // secret when their captures are (every capture used in auth is made one). A
            // Basic user is not one, as in the job's `auth`: a trial saw `-u "alice:…"` become
            // `-u "${COURIER_SECRET_2}:…"` in a curl script, and every "alice" in the log go.
            if key != "basic.user", Template(text).variables.isEmpty {
                context.addSecret(Template(text).render([:]))
            }
        }
        if case .basic(let user, let password) = auth, Template(user).variables.isEmpty,
            Template(password).variables.isEmpty
        {
            context.addSecret(
                JobDecoder.basicCredential(
                    Template(user).render([:]), Template(password).render([:])))
        }
        return form
    }
}
