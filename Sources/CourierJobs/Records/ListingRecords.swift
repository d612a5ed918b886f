/// What a listing file holds at a checkpoint (``ListingCheckpoint``): the file's path under
/// `.courier/records` (its records file's folder of parts, then its name), how many of its bytes hold the records (header line
/// included), how many records that is, and the FNV-1a hash of those records (the bytes after
/// the header line), which a resume checks before it uses them.
struct ListingRecords: Sendable, Equatable {
    var file: String
    var bytes: Int
    var count: Int
    var hash: String
}
