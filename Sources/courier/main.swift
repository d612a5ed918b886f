import CourierJobs
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

// The CLI only parses arguments and calls into CourierJobs; see CommandLineInterface there.
let status = await CommandLineInterface.run(Array(CommandLine.arguments.dropFirst()))
exit(status)
