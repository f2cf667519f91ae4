/// The version of pushtrace (its agent, CLI and server are released together) and of the bundle format they write.
public enum PushTraceVersion {
    /// The release, as `pushtrace --version` prints it and the agent names itself in every manifest.
    public static let release = "1.0.0"
    /// The bundle format (docs/protocol.md#bundles): the `schema` every manifest carries.
    public static let bundleSchema: Int64 = 1
    /// The agent's name and version, sent in every manifest's `sdk`.
    public static let sdk = "pushtrace-swift/\(release)"
}
