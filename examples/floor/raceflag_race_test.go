//go:build race

package floor_test

// raceEnabled is true when the tests were built with -race.
const raceEnabled = true
