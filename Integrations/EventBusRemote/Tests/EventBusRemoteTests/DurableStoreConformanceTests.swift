import DurableStoreConformance
import EventBusRemote
import Testing

@Suite("InMemoryDurableStore passes the DurableStore conformance suite (the same checks as PostgreSQL's store)")
struct DurableStoreConformanceTests {
    @Test("conformance check", arguments: DurableStoreConformance<InMemoryDurableStore>.checks)
    func check(_ name: String) async throws {
        try await DurableStoreConformance { InMemoryDurableStore() }.run(name)
    }

    @Test(
        "conformance check, the store's wake-ups hidden (a store of other processes: its readers poll)",
        arguments: DurableStoreConformance<FaultyStore>.checks)
    func checkPolling(_ name: String) async throws {
        try await DurableStoreConformance { FaultyStore() }.run(name)
    }

    @Test(
        "schedule conformance check", arguments: DurableScheduleStoreConformance<InMemoryDurableStore>.checks)
    func scheduleCheck(_ name: String) async throws {
        try await DurableScheduleStoreConformance { InMemoryDurableStore() }.run(name)
    }

    @Test(
        "dead letter conformance check",
        arguments: DurableDeadLetterStoreConformance<InMemoryDurableStore>.checks)
    func deadLetterCheck(_ name: String) async throws {
        try await DurableDeadLetterStoreConformance { InMemoryDurableStore() }.run(name)
    }

    @Test("an unknown check fails with a ConformanceFailure naming it")
    func unknownCheck() async throws {
        let failure = await #expect(throws: ConformanceFailure.self) {
            try await DurableStoreConformance { InMemoryDurableStore() }.run("noSuchCheck")
        }
        #expect(failure?.check == "noSuchCheck")
        #expect(failure?.description.contains("ConformanceRun.swift:") == true, "\(failure as Any)")
        #expect(failure?.message.contains("DurableStoreConformance.checks") == true, "\(failure as Any)")
    }

    @Test("an unknown dead letter check fails with a ConformanceFailure naming it")
    func unknownDeadLetterCheck() async throws {
        let failure = await #expect(throws: ConformanceFailure.self) {
            try await DurableDeadLetterStoreConformance { InMemoryDurableStore() }.run("noSuchCheck")
        }
        #expect(failure?.check == "noSuchCheck")
        #expect(failure?.description.contains("ConformanceRun.swift:") == true, "\(failure as Any)")
        #expect(failure?.message.contains("DurableDeadLetterStoreConformance.checks") == true, "\(failure as Any)")
    }

    @Test("every check has a summary")
    func summaries() {
        for check in DurableStoreConformance<InMemoryDurableStore>.checks {
            #expect(DurableStoreConformance<InMemoryDurableStore>.summary(of: check) != nil, "\(check)")
        }
        for check in DurableScheduleStoreConformance<InMemoryDurableStore>.checks {
            #expect(DurableScheduleStoreConformance<InMemoryDurableStore>.summary(of: check) != nil, "\(check)")
        }
        for check in DurableDeadLetterStoreConformance<InMemoryDurableStore>.checks {
            #expect(DurableDeadLetterStoreConformance<InMemoryDurableStore>.summary(of: check) != nil, "\(check)")
        }
        #expect(DurableDeadLetterStoreConformance<InMemoryDurableStore>.summary(of: "noSuchCheck") == nil)
    }
}
