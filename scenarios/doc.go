// Package scenarios holds racekit's race scenarios, one *.txtar file each,
// and the runner that plays them against a real control plane:
//
//	go test ./scenarios                                  # every scenario
//	go test ./scenarios -run 'TestScenarios/deployment_conflict$'
//	go test ./scenarios -run TestScenarios -update       # rewrite golden traces
//
// The scenario language is described by `racekit help scenario`.
package scenarios
