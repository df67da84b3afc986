/// The release of this build, as `/api/status` reports it.
public enum HeadwaterVersion {
    public static let current = "0.1.0-dev"
}
