// Package auto explores a workload with no hint: an explore auto line
// names the workload alone, and auto plans the faults (a restart at each
// of the operator's own writes; a restart after the workload against a
// view of each resource it watches as of each moment it changed; a held
// watch across others' writes to one object, released with a relist), runs
// each as an ordinary explore interleaving, and judges it by a
// differential oracle: its end state, history and failures against two
// reference runs of the workload with no fault.
//
// Its contract:
//
//   - It knows no operator: the plans come from the learning run's trace
//     (who wrote what, who listed and watched what) and the setup's start
//     and spawn lines, the oracle from what the runs read at their end.
//   - It runs scripts through explore (explore.Auto: the learning run, the
//     runs of plans) and reads each run's outcome as data: its failures,
//     its trace, and what its auto-observe line read.
//   - A difference is a finding only when the reference runs agree on it
//     (the masks), the neutral twin (a restart after the workload with a
//     fresh view) does not show it too, and a rerun of the plan shows it
//     again; each finding says what differed as data
//     (explore.Difference).
package auto
