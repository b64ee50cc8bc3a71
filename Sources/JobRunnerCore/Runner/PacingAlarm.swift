import Foundation

/// Says when the wait of ``CommitPacing`` for fresh attempts is over, from a thread of its own.
///
/// The pump arms it on nearly every commit of a run of quick attempts and almost always
/// disarms it before it rings (the attempts ended first). A task that slept and was cancelled
/// per commit cost a tenth of the pump's time: the task, the cancellation, Dispatch's timer.
/// Here arming and disarming only set a date under a lock, without waking anyone: the alarm's
/// thread sleeps until the date it knew, looks again, and sleeps on. While it is in use it
/// never sleeps longer than the last wait (it looks again that often when nothing is armed),
/// so a new date is never missed; after a second without one it sleeps until woken, and the
/// next `arm` wakes it.
final class PacingAlarm: @unchecked Sendable {
    // @unchecked: every member below `ring` is guarded by `mutex`.

    /// Called on the alarm's thread with the number ``arm(after:)`` returned, once its date
    /// passed while it was still armed.
    private let ring: @Sendable (_ alarm: Int) -> Void
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let wakeUp = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    /// The date armed (nanoseconds of the monotonic clock) and its number.
    private var armed: (date: UInt64, alarm: Int)?
    private var lastAlarm = 0
    /// How long the last wait was, and when it was armed: how often the thread looks while
    /// the alarm is in use, and until when it counts as in use.
    private var lastWait: UInt64 = 0
    private var lastArmedAt: UInt64 = 0
    /// When the thread wakes next by itself: 0 while it is awake, nil when it sleeps until woken.
    private var wakesAt: UInt64? = 0
    private var started = false
    private var stopped = false

    /// How long after the last `arm` the thread stops looking by itself.
    static let inUseFor: UInt64 = 1_000_000_000

    init(_ ring: @escaping @Sendable (_ alarm: Int) -> Void) {
        self.ring = ring
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(wakeUp, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(wakeUp)
        pthread_mutex_destroy(mutex)
        wakeUp.deallocate()
        mutex.deallocate()
    }

    /// Arms the alarm to ring once `wait` has passed, replacing the date armed; returns the
    /// number it rings with. Starts the thread the first time.
    func arm(after wait: Duration) -> Int {
        let now = Self.now()
        let nanoseconds = UInt64(max(wait.seconds, 0) * 1e9)
        let date = now + nanoseconds
        pthread_mutex_lock(mutex)
        lastAlarm += 1
        let alarm = lastAlarm
        armed = (date, alarm)
        lastWait = nanoseconds
        lastArmedAt = now
        let startThread = !started && !stopped
        started = true
        // Asleep past the new date: only then is the thread woken.
        let wake = wakesAt.map { $0 > date } ?? true
        // No thread to wait (stopped, or it could not start): the wait is over at once.
        let ringNow = stopped
        if ringNow { armed = nil }
        pthread_mutex_unlock(mutex)
        if ringNow {
            ring(alarm)
        } else if startThread {
            spawn()
        } else if wake {
            pthread_cond_signal(wakeUp)
        }
        return alarm
    }

    /// Takes back the date armed, if any: the alarm does not ring for it.
    func disarm() {
        pthread_mutex_lock(mutex)
        armed = nil
        pthread_mutex_unlock(mutex)
    }

    /// Ends the thread; from then on an `arm` rings at once.
    func stop() {
        pthread_mutex_lock(mutex)
        stopped = true
        armed = nil
        pthread_mutex_unlock(mutex)
        pthread_cond_broadcast(wakeUp)
    }

    private func spawn() {
        // The thread keeps the alarm alive until it ends.
        let context = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        let created = pthread_create(
            &thread, nil,
            { context in
                guard let context else { return nil }
                Unmanaged<PacingAlarm>.fromOpaque(context).takeRetainedValue().watch()
                return nil
            }, context)
        if created == 0 {
            pthread_detach(thread)
        } else {
            // No thread: the alarm rings at once, so a commit never waits for nothing.
            Unmanaged<PacingAlarm>.fromOpaque(context).release()
            pthread_mutex_lock(mutex)
            let alarm = armed?.alarm
            stopped = true
            armed = nil
            pthread_mutex_unlock(mutex)
            if let alarm { ring(alarm) }
        }
    }

    /// The thread's life: rings for each date that passes while armed, until stopped.
    private func watch() {
        Thread.current.name = "pacing-alarm"
        pthread_mutex_lock(mutex)
        while !stopped {
            let now = Self.now()
            if let armed, armed.date <= now {
                self.armed = nil
                wakesAt = 0
                pthread_mutex_unlock(mutex)
                ring(armed.alarm)
                pthread_mutex_lock(mutex)
                continue
            }
            if let armed {
                sleep(until: armed.date)
            } else if now < lastArmedAt + Self.inUseFor {
                // Nothing armed: look again after the last wait, so that a date armed meanwhile
                // (at least that far off) is not overslept and needs no wake.
                sleep(until: now + max(lastWait, 1_000_000))
            } else {
                wakesAt = nil
                pthread_cond_wait(wakeUp, mutex)
            }
            wakesAt = 0
        }
        pthread_mutex_unlock(mutex)
    }

    /// Sleeps until `date` or a wake; the lock is held before and after.
    private func sleep(until date: UInt64) {
        wakesAt = date
        var time = timespec(tv_sec: Int(date / 1_000_000_000), tv_nsec: Int(date % 1_000_000_000))
        _ = pthread_cond_timedwait(wakeUp, mutex, &time)
    }

    private static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}
