public enum CourierJobsPlaceholder {}
