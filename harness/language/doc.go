// Package language is racekit's scenario language: the Scenario of one
// running script, the commands and their usage data, the script runner
// (testscript), and the extension points the layers above plug into.
//
// Its contract:
//
//   - A Scenario holds a namespace, its actors (each with the recorder and
//     the hooks in its transport), its armed hooks and snapshots, and, for
//     each extension, the state the extension keeps itself (Key). It knows
//     no controller, no process and no exploration.
//   - Commands are data (Command): help, the language reference and the
//     argument checks come from the same fields; a command table (Table)
//     refuses a name given twice.
//   - An Extension adds commands and acts at the seams of a scenario's
//     life: when it starts, after each hook action, before each line, and
//     when it ends. A layer that runs a script to judge it (an
//     exploration, a check of the checks) adds one that changes the run's
//     course: which failed hook actions the run goes on from (Tolerate),
//     whether it goes on past an assertion that fails (KeepGoing), whether
//     every read is a GET (ReadServer), and what the trace command shows
//     (ShowTrace). The language has no option of its own for either.
//   - Results are data: each failure is a Failure, made once where it
//     happens and rendered by whoever shows it; each line's outcome is a
//     Verdict. No one reads them back from the log.
//   - What an assertion reads of an object is the API server's: the trace's
//     last answer about it, when nothing has touched it since, or a GET.
package language
