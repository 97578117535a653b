// Conveniences for the system's app lifecycle notifications, where the platform has them (UIKit
// platforms and macOS). The names are given by their stable raw values, so this file needs neither
// UIKit nor AppKit (nor the main actor); on other platforms (Linux) it declares nothing.

#if os(iOS) || os(tvOS) || os(visionOS) || os(macOS)
    public import EventBus
    public import Foundation

    /// The app lifecycle as a typed event, fed from the system's notifications by
    /// ``EventBus/EventBus/bridgeAppLifecycle()``.
    ///
    /// On UIKit platforms (iOS, iPadOS, tvOS, visionOS, Mac Catalyst) every case has a notification;
    /// on macOS (AppKit) there are no ``didEnterBackground``, ``willEnterForeground`` or
    /// ``didReceiveMemoryWarning`` notifications, so those cases never arrive there.
    ///
    /// ```swift
    /// EventBus.shared.bridgeAppLifecycle()
    /// subscribe(AppLifecycleEvent.self).ofType(AppLifecycleEvent.didBecomeActive.rawValue)
    ///     .onMainActor().next { owner, _ in owner.refresh() }   // in a view controller
    /// ```
    public enum AppLifecycleEvent: String, Event, CaseIterable {
        /// The app became active (`UIApplication`/`NSApplication.didBecomeActiveNotification`).
        case didBecomeActive
        /// The app is about to become inactive (`willResignActiveNotification`).
        case willResignActive
        /// The app entered the background (`UIApplication.didEnterBackgroundNotification`; UIKit only).
        case didEnterBackground
        /// The app is about to enter the foreground (`UIApplication.willEnterForegroundNotification`;
        /// UIKit only).
        case willEnterForeground
        /// The system asked the app to free memory
        /// (`UIApplication.didReceiveMemoryWarningNotification`; UIKit only).
        case didReceiveMemoryWarning
        /// The app is about to terminate (`willTerminateNotification`).
        case willTerminate

        /// The case's name, so `ofType(AppLifecycleEvent.didBecomeActive.rawValue)` picks one case.
        ///
        /// ```swift
        /// let token = bus.on(AppLifecycleEvent.self).ofType(AppLifecycleEvent.willTerminate.rawValue).next { _ in save() }
        /// ```
        public var eventType: String? { rawValue }

        /// The system notification name of each case on this platform.
        ///
        /// ```swift
        /// print(AppLifecycleEvent.notificationNames[.didBecomeActive]?.rawValue ?? "none")
        /// ```
        public static var notificationNames: [AppLifecycleEvent: Notification.Name] {
            #if os(macOS) && !targetEnvironment(macCatalyst)
                return [
                    .didBecomeActive: Notification.Name("NSApplicationDidBecomeActiveNotification"),
                    .willResignActive: Notification.Name("NSApplicationWillResignActiveNotification"),
                    .willTerminate: Notification.Name("NSApplicationWillTerminateNotification"),
                ]
            #else
                return [
                    .didBecomeActive: Notification.Name("UIApplicationDidBecomeActiveNotification"),
                    .willResignActive: Notification.Name("UIApplicationWillResignActiveNotification"),
                    .didEnterBackground: Notification.Name("UIApplicationDidEnterBackgroundNotification"),
                    .willEnterForeground: Notification.Name("UIApplicationWillEnterForegroundNotification"),
                    .didReceiveMemoryWarning: Notification.Name("UIApplicationDidReceiveMemoryWarningNotification"),
                    .willTerminate: Notification.Name("UIApplicationWillTerminateNotification"),
                ]
            #endif
        }
    }

    extension EventBus {
        /// Feeds ``AppLifecycleEvent`` subscribers from the system's app lifecycle notifications on the
        /// bus's ``notificationCenter`` (`NotificationCenter.default` for
        /// ``/EventBus/EventBus/shared``).
        ///
        /// Events arrive on the thread the system posts on (the main thread), on the subscriber's
        /// ``/EventBus/SubscriberMaker/atQueue(_:)`` queue, or on the main actor after
        /// ``/EventBus/SubscriberMaker/onMainActor()``. Call it once per bus; the bridge lasts until
        /// its token is disposed or the bus is deallocated.
        ///
        /// ```swift
        /// EventBus.shared.bridgeAppLifecycle()
        /// let token = EventBus.shared.on(AppLifecycleEvent.self).next { print("lifecycle:", $0) }
        /// ```
        @discardableResult
        public func bridgeAppLifecycle() -> EventToken {
            var events: [Notification.Name: AppLifecycleEvent] = [:]
            for (event, name) in AppLifecycleEvent.notificationNames { events[name] = event }
            return bridge(notifications: events)
        }
    }
#endif
