// Package referee holds the rules of optimistic concurrency, checked on the
// wire: the harness's referee.
//
// Its contract:
//
//   - The rules are a pure function of a trace's rows (record.Row) and of
//     what the caller says about them (Check: whose calls, which span,
//     whether they are one reconcile's, which resources are side effects):
//     no scenario, no cluster, no clock. Tests write rows by hand.
//   - A rule broken is a Finding, a value: the object, the rule's short
//     name and a text in the trace's symbols, so that a message reads the
//     same on every run.
//   - A failure that names rules carries them as values (RulesError,
//     NamingRules), so that whoever judges a run reads the rules, never the
//     message.
package referee
