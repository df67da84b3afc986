/// The release of this build: `headwater --version` prints it, `/api/status` and
/// `headwater_build_info` report it. One constant, so every place that names the release agrees.
public enum HeadwaterVersion {
    public static let current = "0.1.0-dev"
}
