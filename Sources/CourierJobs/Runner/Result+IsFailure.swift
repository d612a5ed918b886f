/// Whether a result is a failure, as a condition (`where !result.isFailure`).
extension Result {
    var isFailure: Bool {
        if case .failure = self { return true }
        return false
    }
}
