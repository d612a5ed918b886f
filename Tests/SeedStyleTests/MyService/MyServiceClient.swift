import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

public final class MyServiceClient: Sendable {
    public let configuration: APIConfiguration
    private let apiClient: any APIClient

    public let users: UserService

    public convenience init(baseURL: URL, apiKey: String) {
        self.init(configuration: APIConfiguration(baseURL: baseURL, apiKey: apiKey))
    }

    public convenience init(configuration: APIConfiguration) {
        let sessionConfig = URLSessionConfiguration.default
        sessionConfig.timeoutIntervalForRequest = configuration.timeoutInterval
        sessionConfig.timeoutIntervalForResource = configuration.timeoutInterval
        let session = URLSession(configuration: sessionConfig)
        let httpClient = URLSessionHTTPClient(session: session)
        let client = DefaultAPIClient(httpClient: httpClient, configuration: configuration)
        self.init(apiClient: client, configuration: configuration)
    }

    public init(apiClient: some APIClient, configuration: APIConfiguration) {
        self.apiClient = apiClient
        self.configuration = configuration
        self.users = UserService(apiClient: apiClient)
    }
}
