extension String {
    /// The text with zeros before it up to `width` characters (hex ids of a fixed width).
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
