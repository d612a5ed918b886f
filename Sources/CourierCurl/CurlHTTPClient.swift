public enum CourierCurlPlaceholder {}
