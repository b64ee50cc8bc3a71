import Foundation
import HTTPTypes
import Hummingbird
import JobRunnerCore
import NIOCore

extension DashboardResponder {
    /// `GET /events`: every committed event as Server-Sent Events. With `Last-Event-ID` (or
    /// `?after=N`) the stream resumes after that event, the ones before the client joined read
    /// from the store; then each comes through the client's bounded buffer in the ``EventHub``.
    /// A client dropped for falling behind sees its stream end, and its browser reconnects with
    /// the last id it got.
    func events(_ request: Request) -> Response {
        let resume =
            request.headers[.lastEventID].flatMap { UInt64($0.trimmingCharacters(in: .whitespaces)) }
            ?? request.uri.queryParameters["after"].flatMap { UInt64($0) }
        let hub = self.hub
        let reader = self.reader
        let metrics = self.metrics
        let body = ResponseBody { writer in
            let subscription = hub.subscribe()
            metrics.clientJoined()
            defer {
                hub.unsubscribe(subscription)
                metrics.clientLeft(dropped: subscription.dropped)
            }
            // Reconnect after 1 s when the stream ends; a comment at once, so the client knows
            // the stream is open.
            try await writer.write(ByteBuffer(string: "retry: 1000\n: jobrunner events\n\n"))
            var last = resume ?? subscription.joinedAfter
            var bytes: [UInt8] = []
            if last < subscription.joinedAfter {
                for try await event in reader.events(after: last) {
                    if event.sequence > subscription.joinedAfter { break }
                    EventStream.frame(event, into: &bytes)
                    last = event.sequence
                    if bytes.count >= 32 << 10
                        || (event.sequence == subscription.joinedAfter && !bytes.isEmpty)
                    {
                        try await writer.write(ByteBuffer(bytes: bytes))
                        bytes.removeAll(keepingCapacity: true)
                    }
                    if event.sequence == subscription.joinedAfter { break }
                }
            }
            for await item in subscription.items {
                switch item {
                case .heartbeat:
                    bytes.append(contentsOf: ": heartbeat\n\n".utf8)
                case .event(let event, let frame):
                    guard event.sequence > last else { continue }
                    bytes.append(contentsOf: frame)
                    last = event.sequence
                }
                if bytes.isEmpty { continue }
                try await writer.write(ByteBuffer(bytes: bytes))
                bytes.removeAll(keepingCapacity: true)
            }
            try await writer.finish(nil)
        }
        return Response(
            status: .ok,
            headers: [
                .contentType: "text/event-stream; charset=utf-8", .cacheControl: "no-store",
                .xContentTypeOptions: "nosniff",
            ],
            body: body)
    }
}
