/// The keys of `auth` (the job's and a task's) and of the objects of its forms.
extension JobKeys {
    /// `auth` and the objects of its forms.
    struct Auth: Sendable {
        let forms: JobObjectKeys
        let basic: JobObjectKeys
        let header: JobObjectKeys
        let oauth2: JobObjectKeys

        init(named name: String, schema: String, templated: Bool) {
            forms = JobKeys.auth(named: name, schema: schema, templated: templated)
            basic = JobKeys.authBasic(named: "\(name).basic", templated: templated)
            header = JobKeys.authHeader(named: "\(name).header", templated: templated)
            oauth2 = JobKeys.authOAuth2(named: "\(name).oauth2")
        }
    }

    /// A credential: always `${env:…}`, templated in a task's `auth`.
    fileprivate static func credential(templated: Bool) -> [JobKey.Trait] {
        templated ? [.templated, .env] : [.env]
    }

    fileprivate static func auth(named name: String, schema: String, templated: Bool)
        -> JobObjectKeys
    {
        JobObjectKeys(
            name: name, schema: schema,
            keys: [
                JobKey("bearer", .string, credential(templated: templated)),
                JobKey("basic", .object),
                JobKey("header", .object),
                JobKey("oauth2", .object),
            ])
    }

    fileprivate static func authBasic(named name: String, templated: Bool) -> JobObjectKeys {
        JobObjectKeys(
            name: name, schema: "/properties/auth/oneOf/1/properties/basic",
            keys: [
                JobKey("user", .string, credential(templated: templated)),
                JobKey("password", .string, credential(templated: templated)),
            ])
    }

    /// `auth.oauth2`, the same in a task's `auth`: no templates (a token endpoint and its client
    /// are the job's configuration, not data); the secret and the refresh token must be
    /// `${env:…}` or `${file:…}` references (``JobDecoder/decodeOAuth2``).
    fileprivate static func authOAuth2(named name: String) -> JobObjectKeys {
        JobObjectKeys(
            name: name, schema: "/properties/auth/oneOf/3/properties/oauth2",
            keys: [
                JobKey("tokenURL", .string, .env),
                JobKey("grant", .string),
                JobKey("clientId", .string, .env),
                JobKey("clientSecret", .string, .env),
                JobKey("refreshToken", .string, .env),
                JobKey("scope", .string, .env),
                JobKey("clientAuth", .string),
            ])
    }

    fileprivate static func authHeader(named name: String, templated: Bool) -> JobObjectKeys {
        JobObjectKeys(
            name: name, schema: "/properties/auth/oneOf/2/properties/header",
            keys: [
                JobKey("name", .string),
                JobKey("value", .string, credential(templated: templated)),
            ])
    }
}
