import HeadwaterTesting
import Testing

/// The tests that run the real binary with real clients (ffmpeg encoders and players, Chromium,
/// systemd-analyze), one at a time: each holds a test thread while it waits on processes, and
/// several at once would starve the others (two cores) and make every timing in them noisy. Those
/// waits block their thread, so the suite runs on threads of its own (``DedicatedThreadsTrait``), not
/// on the cooperative pool the in-process tests share.
@Suite("Real clients", .serialized, .waitsOnProcesses)
enum RealClients {}
