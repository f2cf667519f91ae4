import Foundation
import Testing

@testable import PushTraceAgent

@Suite("Agent: what the manifest says of the app and device, found without the app's help")
struct ClientDescriptionTests {
    let server = URL(string: "https://pushtrace.example.com")!

    @Test("an uploader configured with only server, token and app ID still sends the system and the device model")
    func systemAndModelByDefault() throws {
        let configuration = UploaderConfiguration(server: server, token: "pt_x", appID: "net.rorklab.dailypick")
        let os = try #require(configuration.os)
        #expect(os.wholeMatch(of: /(iOS|macOS|watchOS|tvOS|visionOS|Linux) \d+\.\d+(\.\d+)?/) != nil, "\(os)")
        var system = utsname()
        #expect(uname(&system) == 0)
        let machine = withUnsafeBytes(of: &system.machine) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        #expect(configuration.deviceModel == machine)
    }

    @Test("the app version and build come from the bundle's Info.plist, and what the app passes wins")
    func versionAndBuildFromTheBundle() {
        let info: [String: Any] = ["CFBundleShortVersionString": "2.3.1", "CFBundleVersion": "45"]
        let found = UploaderConfiguration(
            server: server, token: "pt_x", appID: "a", appVersion: nil, build: nil, os: nil, deviceModel: nil,
            bundleInfo: info)
        #expect(found.appVersion == "2.3.1" && found.build == "45")
        let given = UploaderConfiguration(
            server: server, token: "pt_x", appID: "a", appVersion: "3.0", build: "7", os: "iOS 18.1",
            deviceModel: "iPhone15,2", bundleInfo: info)
        #expect(given.appVersion == "3.0" && given.build == "7" && given.os == "iOS 18.1" && given.deviceModel == "iPhone15,2")
        let empty = UploaderConfiguration(
            server: server, token: "pt_x", appID: "a", appVersion: nil, build: nil, os: nil, deviceModel: nil,
            bundleInfo: ["CFBundleShortVersionString": "", "CFBundleVersion": 45])
        #expect(empty.appVersion == nil && empty.build == nil)
    }
}
