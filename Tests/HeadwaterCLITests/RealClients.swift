import Testing

/// The tests that run the real binary with real clients (ffmpeg encoders and players, Chromium,
/// systemd-analyze), one at a time: each holds a test thread while it waits on processes, and
/// several at once would starve the others (two cores) and make every timing in them noisy.
@Suite("Real clients", .serialized)
enum RealClients {}
