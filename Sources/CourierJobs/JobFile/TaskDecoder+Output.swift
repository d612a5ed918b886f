import Courier
import Foundation

/// `save` and `conditional`: where a successful body goes, and whether to fetch it only when
/// it changed.
extension TaskDecoder {
    mutating func readSave() -> String? {
        let saveNode = reader.take("save")
        let save = reader.string("save")
        if let save, let saveNode {
            checkVariables(save, key: "save", at: saveNode)
            if let problem = OutputPath.problem(with: save) {
                reader.fail("save", problem, at: saveNode)
            }
        }
        return save
    }

    mutating func readConditional(save: String?) -> Bool {
        let conditionalNode = reader.take("conditional")
        let conditional = reader.bool("conditional") ?? false
        if conditional, save == nil, let conditionalNode {
            reader.fail(
                "conditional",
                "needs \"save\": the validators belong to a saved output", at: conditionalNode)
        }
        return conditional
    }
}
