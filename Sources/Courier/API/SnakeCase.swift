/// `createdAt` → `created_at`, `userID` → `user_id`, `myURLProperty` → `my_url_property`: the
/// word breaks `JSONEncoder.KeyEncodingStrategy.convertToSnakeCase` makes, for form keys.
enum SnakeCase {
    static func convert(_ key: String) -> String {
        let characters = Array(key)
        guard characters.contains(where: \.isUppercase) else { return key }
        var output = ""
        for (index, character) in characters.enumerated() {
            if character.isUppercase, index > 0, characters[index - 1] != "_" {
                let previous = characters[index - 1]
                let next = index + 1 < characters.count ? characters[index + 1] : nil
                // A break before a capital that follows a lowercase letter or digit
                // (`userId`), and before the last capital of an acronym that starts a word
                // (`URLProperty` → `url_property`).
                if !previous.isUppercase || (next?.isLowercase ?? false) { output.append("_") }
            }
            output += character.lowercased()
        }
        return output
    }
}
