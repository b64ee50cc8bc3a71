import Foundation
import Testing

@testable import JobRunnerCore

/// The runner's mailbox: every waiting message in one batch, in order; a waiting consumer is
/// woken; a cancelled one ends as an `AsyncStream` does.
struct MailboxTests {
    @Test func messagesThatArrivedMeanwhileComeInOneBatchInOrder() async {
        let mailbox = Mailbox<Int>()
        for value in 1...5 { mailbox.yield(value) }
        #expect(await mailbox.next() == [1, 2, 3, 4, 5])
        mailbox.yield(6)
        #expect(await mailbox.next() == [6])
    }

    @Test func aWaitingConsumerIsWokenByTheNextMessage() async {
        let mailbox = Mailbox<Int>()
        let consumer = Task { await mailbox.next() }
        // From another thread, whether or not the consumer waits already.
        Thread.detachNewThread { mailbox.yield(7) }
        #expect(await consumer.value == [7])
    }

    @Test func aCancelledConsumerGetsTheWaitingMessagesThenNil() async {
        let mailbox = Mailbox<Int>()
        let consumer = Task { () -> [[Int]?] in
            var batches: [[Int]?] = []
            // Waits on an empty mailbox until cancelled.
            batches.append(await mailbox.next())
            mailbox.yield(1)
            batches.append(await mailbox.next())
            batches.append(await mailbox.next())
            return batches
        }
        consumer.cancel()
        #expect(await consumer.value == [nil, [1], nil])
    }
}
