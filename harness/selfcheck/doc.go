// Package selfcheck checks the oracles themselves: that every assertion
// has a failing twin (a scenario in which its claim is false, and it
// fails), and that noise which cannot matter changes no verdict
// (CheckNoise, the metamorphic test).
//
// It runs scenarios with the options it is given, and reads their
// verdicts and failures as data.
package selfcheck
