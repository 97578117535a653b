// The bridge's benchmark: events per second and latency from publish to the remote handler, over
// loopback, with 1 KiB payloads, two or more bridges in one process on one PostgreSQL server, each
// measurement on a channel of its own. Each scenario is a file of its own (`Scenario.swift` says
// how to add one); the list below is the order of a full run.
//
//   Integrations/EventBusPostgres/scripts/with-postgres.sh \
//       swift run -c release --package-path Integrations/EventBusPostgres EventBusPostgresBenchmark
//
// BENCH_EVENTS sets the events per measured row (default 5,000; a few hundred make a smoke run, as
// CI's BENCH_EVENTS=200 does); BENCH_SCENARIOS=name,name runs only those. The load average is
// printed first and last, the goals checked just before the last line, `issues reported: N`.
//
// Latency is measured from just before `publish` to the moment the receiving instance's handler
// runs (on its bus queue), with one monotonic clock (every bridge is in this process).

/// Every scenario, in the order of a full run.
let scenarios: [Scenario] = [
    .atMostOnce,  // AtMostOnce.swift: beside a bare LISTEN/NOTIFY floor (BareNotify.swift)
    .durable,  // Durable.swift: one publisher, 16 tasks of it
    .durablePublishers,  // Durable.swift: 16 publishing bridges, one consumer
    .scheduled,  // Scheduled.swift: fired per second, lateness
    .consumerGroups,  // GroupDrain.swift: a backlog drained by 1, 2 and 4 members of a group
]

try await runBenchmark(scenarios)
