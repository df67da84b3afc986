import HeadwaterLiveWindow

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension SegmentStorage {
    /// The refusal for a call that adds to the state directory (`write`, `open` with `O_CREAT`,
    /// `rename`) and failed with `errno`: disk full (507, ``IngestRefusal/diskFull(_:)``) when the
    /// file system is out of space or the user out of quota, which the operator must fix and which
    /// clears by itself when space is freed; any other error is a storage failure (500) that says
    /// `what` failed. `errno` is the first argument, so it is read before the message is built.
    static func writeFailure(errno code: Int32, _ what: String) -> IngestRefusal {
        if code == ENOSPC || code == EDQUOT { return .diskFull(String(cString: strerror(code))) }
        return storage("\(what): \(String(cString: strerror(code)))")
    }
}
