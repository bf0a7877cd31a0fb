// Package compare measures the flagship race written the way most operator
// tests are written today, next to racekit's deterministic version: envtest,
// the controller running in the background, a goroutine that sleeps and then
// writes to provoke the race, and Eventually-style polling every 10 ms.
//
// It lives apart from harness, hooks and scenarios on purpose: it sleeps and
// polls, which racekit itself never does. Run it with
//
//	go test ./compare -run '^$' -bench . -benchtime 50x
//
// and compare races/op and ns/op with BenchmarkFlagship in ./scenarios.
package compare
