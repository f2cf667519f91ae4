import PushTraceRecords

/// The Notification Service Extension: `service_not_run`, `service_crashed`, `service_timeout`, `attachment_failed`.
enum ServiceRules {
    static func findings(_ facts: Facts) -> [Finding] {
        var findings: [Finding] = []
        if let sent = facts.sent, sent.record.mutableContent == true, sent.record.hasAlert == true,
            let shown = facts.shownOnDevice.first, !facts.has(.serviceReceived)
        {
            findings.append(
                Finding(
                    .serviceNotRun,
                    "The push asked for the service extension (mutable-content and an alert) and the device showed it, "
                        + "but the service extension never ran.",
                    evidence: [sent, shown],
                    fix: "Check that the extension is embedded in the app (Embed Foundation Extensions), that its "
                        + "deployment target is not above the device's iOS, and that its bundle ID starts with the app's."))
        }
        if let exit = facts.first(.serviceAbnormalExit) {
            let footprint = exit.record.lastFootprintBytes.map { " (last memory footprint \(megabytes($0)))" } ?? ""
            findings.append(
                Finding(
                    .serviceCrashed,
                    "The service extension ended without finishing\(footprint), typically killed at its ~24 MB memory limit.",
                    evidence: [exit],
                    fix: "Download to a file (URLSession downloadTask) instead of into Data, and downsample large images "
                        + "with CGImageSourceCreateThumbnailAtIndex instead of decoding them whole."))
        }
        if let expired = facts.first(.serviceExpired) {
            findings.append(timeout(expired, facts))
        }
        if let failure = attachmentFailure(facts) { findings.append(failure) }
        return findings
    }

    private static func timeout(_ expired: TimelineEntry, _ facts: Facts) -> Finding {
        let elapsed = expired.record.elapsedMs ?? 0
        var message =
            "The service extension ran out of time: serviceExtensionTimeWillExpire() was called after "
            + "\(seconds(elapsed))"
        var evidence = [expired]
        if let slowest = facts.all(.serviceDownload).max(by: { ($0.record.durationMs ?? 0) < ($1.record.durationMs ?? 0) }),
            let duration = slowest.record.durationMs
        {
            message += "; the slowest step was a \(seconds(duration)) download from \(slowest.record.urlHost ?? "?")"
            evidence.append(slowest)
        } else {
            let steps = facts.input.entries.filter { $0.process == .service }
            if let gap = zip(steps, steps.dropFirst()).max(by: { $0.1.ts - $0.0.ts < $1.1.ts - $1.0.ts }) {
                message += "; the longest wait was \(seconds(gap.1.ts - gap.0.ts)) after \(gap.0.record.event ?? "?")"
                evidence.append(gap.0)
            }
        }
        return Finding(
            .serviceTimeout, message + ".", evidence: evidence,
            fix: "Give downloads their own deadline (timeoutIntervalForResource well under 30 s), deliver "
                + "what you have when it passes, and make serviceExtensionTimeWillExpire() call the content "
                + "handler with the best attempt.")
    }

    private static func attachmentFailure(_ facts: Facts) -> Finding? {
        for download in facts.all(.serviceDownload) {
            let r = download.record
            if let error = r.error {
                return Finding(
                    .attachmentFailed, "Downloading the attachment from \(r.urlHost ?? "?") failed: \(error).",
                    evidence: [download],
                    fix: "Check the URL is reachable from devices (HTTPS, App Transport Security) and "
                        + "fall back to delivering the text when the download fails.")
            }
            if let status = r.httpStatus, status >= 400 {
                return Finding(
                    .attachmentFailed, "The attachment download from \(r.urlHost ?? "?") answered HTTP \(status).",
                    evidence: [download],
                    fix: "Fix the attachment URL the backend puts in the payload (expired or private link?).")
            }
        }
        for attachment in facts.all(.serviceAttachment) where attachment.record.ok == false {
            let why = attachment.record.error.map { ": \($0)" } ?? ""
            return Finding(
                .attachmentFailed, "UNNotificationAttachment could not be created\(why).",
                evidence: [attachment],
                fix: "Create the attachment from a local file URL with the right extension, of a "
                    + "supported type and within its size limit.")
        }
        let sized = facts.all(.serviceAttachment) + facts.all(.serviceDownload)
        for entry in sized {
            guard let bytes = entry.record.bytes,
                let kind = AttachmentKind(uti: entry.record.uti, mime: entry.record.mime) ?? urlKind(facts),
                bytes > kind.maxBytes
            else { continue }
            return Finding(
                .attachmentFailed,
                "The \(kind.rawValue) attachment is \(fileMegabytes(bytes)), over the system's "
                    + "\(kind.limitText) limit for \(kind.rawValue)s.",
                evidence: [entry],
                fix: "Serve a smaller rendition for notifications (resize or recompress on the server).")
        }
        if let sent = facts.sent, let url = sent.record.attachmentURL {
            let name = AttachmentKind.fileName(ofURL: url)
            let ext = AttachmentKind.fileExtension(of: name)
            if AttachmentKind(fileExtension: ext) == nil {
                let what = ext.isEmpty ? "has no extension" : "has the extension .\(ext), which the system does not recognise"
                return Finding(
                    .attachmentFailed,
                    "The attachment's file name \"\(name)\" \(what), so iOS cannot tell its type.",
                    evidence: [sent],
                    fix: "Save the download under a name with the right extension (from its Content-Type, "
                        + "e.g. .jpg) before creating UNNotificationAttachment.")
            }
        }
        return nil
    }

    private static func urlKind(_ facts: Facts) -> AttachmentKind? {
        guard let url = facts.sent?.record.attachmentURL else { return nil }
        return AttachmentKind(fileExtension: AttachmentKind.fileExtension(of: AttachmentKind.fileName(ofURL: url)))
    }
}
