/// A number as text without a needless `.0`: `3` for 3.0, `2.5` for 2.5, as JSON encoders and
/// people write them. One rule for the messages, bodies and files that show a number; beyond
/// 10^15 a double holds no more exact integers than that, and keeps its own form.
package enum WholeNumberText {
    package static func of(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}
