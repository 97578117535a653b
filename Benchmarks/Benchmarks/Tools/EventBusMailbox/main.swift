// Off-thread deliveries (issue 41) beside the peers, in one run: EventBus's `atQueue(q)`,
// `isolated(to:)`, `onMainActor()` (from off the main thread) and `events(of:)`, and
// `DispatchQueue.async`, `AsyncStream`, swift-async-algorithms' `AsyncChannel`, a `Task` per event
// and a bare batched SPSC ring (the floor), one producer thread to one consumer, one-`Int` events.
// Prints a Markdown table (Benchmarks/README.md, "Off-thread deliveries (issue 41)"); what each
// column measures is in Scenarios/OffThreadReport.swift, the contenders in Scenarios/OffThread.swift.
//
//     swift build -c release --product MallocInterposerSwift    # once: the allocation counter
//     swift run -c release EventBusMailbox                       # 1M events, median of 5
//     swift run -c release EventBusMailbox --events 100000 --repetitions 1 --only EventBus
//
// Allocations per event are counted by ordo-one/malloc-interposer (package-benchmark's), in a
// child process this tool starts with it preloaded (its 16-byte header per allocation would
// inflate this process's heap figures); without its library next to this executable the column
// says "—".

import Dispatch
import Foundation
import Scenarios

struct Options {
    var run = OffThreadOptions()
    var countMallocs = false
    /// `--fairness`: only the probe of issue 41's finding 3 (see `Fairness.swift`).
    var fairness = false

    static let usage = """
        usage: EventBusMailbox [--events N] [--repetitions N] [--samples N] [--only TEXT]

          --events N       events per backlog and per running consumer (default 1000000)
          --repetitions N  repetitions; each figure is their median (default 5)
          --samples N      events sent one at a time to an idle consumer, per repetition (default 5000)
          --only TEXT      only the contenders whose name contains TEXT (e.g. EventBus, atQueue)
          --fairness       only the fairness probe: a third actor's event while two are flooded
        """

    init(_ arguments: [String]) {
        var rest = arguments[...]
        func count(_ name: String) -> Int {
            guard let text = rest.popFirst(), let number = Int(text), number > 0 else {
                Self.fail("\(name) needs a positive whole number")
            }
            return number
        }
        while let argument = rest.popFirst() {
            switch argument {
            case "--events": run.events = count(argument)
            case "--repetitions": run.repetitions = count(argument)
            case "--samples": run.latencySamples = count(argument)
            case "--fairness": fairness = true
            case "--only":
                guard let text = rest.popFirst() else { Self.fail("--only needs a name") }
                run.filter = text
            case "--count-mallocs": countMallocs = true  // the child this tool starts
            case "--help", "-h":
                print(Self.usage)
                exit(0)
            default: Self.fail("unknown argument \(argument)")
            }
        }
    }

    /// The arguments that make a child measure what this run measures.
    var childArguments: [String] {
        ["--count-mallocs", "--events", "\(run.events)"] + (run.filter.map { ["--only", $0] } ?? [])
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("EventBusMailbox: \(message)\n\(usage)\n".utf8))
        exit(64)
    }
}

/// The child's report: one line per contender, "<name>\t<enqueue>\t<drain>" (allocations per event).
func printMallocs(_ options: OffThreadOptions) {
    guard mallocsCountable else {
        FileHandle.standardError.write(Data("EventBusMailbox: --count-mallocs needs the interposer preloaded\n".utf8))
        exit(1)
    }
    for (name, counts) in countBacklogMallocs(options) {
        print("\(name)\t\(counts.enqueue)\t\(counts.drain)")
    }
}

/// Allocations per event, counted by a child run with the interposer preloaded; nil (with a note
/// on stderr) when the interposer's library is not built.
func mallocsFromChild(_ options: Options) -> [String: BacklogMallocs]? {
    #if os(macOS)
        let (library, preload) = ("libMallocInterposerSwift.dylib", "DYLD_INSERT_LIBRARIES")
    #else
        let (library, preload) = ("libMallocInterposerSwift.so", "LD_PRELOAD")
    #endif
    guard let executable = Bundle.main.executableURL else { return nil }
    let interposer = executable.deletingLastPathComponent().appendingPathComponent(library)
    guard FileManager.default.fileExists(atPath: interposer.path) else {
        note(
            "mallocs not counted: no \(interposer.path) (build it: swift build -c release --product MallocInterposerSwift)"
        )
        return nil
    }
    note("counting allocations (a child with \(library) preloaded)")
    let child = Process()
    child.executableURL = executable
    child.arguments = options.childArguments
    child.environment = ProcessInfo.processInfo.environment.merging([preload: interposer.path]) { $1 }
    let output = Pipe()
    child.standardOutput = output
    do { try child.run() } catch {
        note("mallocs not counted: \(error)")
        return nil
    }
    let data = output.fileHandleForReading.readDataToEndOfFile()
    child.waitUntilExit()
    guard child.terminationStatus == 0 else {
        note("mallocs not counted: the child exited with \(child.terminationStatus)")
        return nil
    }
    var counts: [String: BacklogMallocs] = [:]
    for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
        let fields = line.split(separator: "\t")
        guard fields.count == 3, let enqueue = Double(fields[1]), let drain = Double(fields[2]) else { continue }
        counts[String(fields[0])] = BacklogMallocs(enqueue: enqueue, drain: drain)
    }
    return counts
}

func note(_ text: String) {
    FileHandle.standardError.write(Data("EventBusMailbox: \(text)\n".utf8))
}

/// The machine and its load, for the line above the table.
func machine() -> String {
    var loads = [Double](repeating: 0, count: 3)
    let loaded = getloadavg(&loads, 3) == 3
    let cpu = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8))?
        .split(separator: "\n").first { $0.hasPrefix("model name") }?
        .split(separator: ":").last?.trimmingCharacters(in: .whitespaces)
    let load = loaded ? loads.map { String(format: "%.2f", $0) }.joined(separator: " ") : "?"
    return "\(ProcessInfo.processInfo.activeProcessorCount) cores\(cpu.map { " (\($0))" } ?? ""), load average \(load)"
}

func main(_ options: Options) {
    if options.countMallocs {
        printMallocs(options.run)
        return
    }
    if options.fairness {
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            print(await fairnessReport())
            done.signal()
        }
        done.wait()
        return
    }
    let mallocs = mallocsFromChild(options)
    let before = machine()
    let started = Date()
    let table = offThreadReport(options.run, mallocs: mallocs) { note($0) }
    let seconds = Int(Date().timeIntervalSince(started))
    print(
        """
        \(options.run.events) one-`Int` events per backlog and per running consumer, \
        \(options.run.latencySamples) to an idle consumer; median of \(options.run.repetitions); \
        \(seconds) s. Before: \(before). After: \(machine()).

        \(table)
        """
    )
}

// Off the main thread, so that the main thread drains the main queue (the main-actor contender).
let options = Options(Array(CommandLine.arguments.dropFirst()))
Thread.detachNewThread {
    main(options)
    exit(0)
}
dispatchMain()
