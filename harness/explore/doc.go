// Package explore runs a workload at every moment of its calls: a learning
// run lists the moments (before each call is sent, after each answer),
// then each interferer is hooked at each moment, every run in a namespace
// of its own, and the invariants must hold in every one.
//
// Its contract:
//
//   - It works on the language's public surface: it runs scripts with the
//     options the scenario runs with, and reads each run's outcome as data
//     (Result, Failure), never its log.
//   - Two moments count as one only when nothing can happen between them
//     in any run hooked there (moments); with pruning off, every moment
//     runs, and a test requires the same verdicts.
//   - A report says what it explored (its identity): Merge joins only the
//     shards of one exploration.
package explore
