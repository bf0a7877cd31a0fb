//go:build race

package scenarios

// raceEnabled is true when the tests were built with -race.
const raceEnabled = true
