/// Courier's version, as `courier --version` prints it and logs record it.
public enum CourierVersion {
    public static let current = "0.1.0"
}
