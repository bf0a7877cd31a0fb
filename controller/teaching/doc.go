// Package teaching names the teaching variants of the reference controller:
// builds that each break one rule of optimistic concurrency on purpose, so
// that a race scenario can show what the rule is for, and so that the
// scenario catalogue can prove it catches each broken rule.
//
// The contract:
//
//   - A Variant is a value of this package. The only ways to get one other
//     than the zero Variant are Lookup and Variants: no other package can
//     make one up.
//   - The zero Variant is the production controller, which breaks no rule.
//     controller.New and controller.Run always build it; only
//     controller.NewTeachingVariant builds another, and only the racekit
//     harness calls that.
//   - Each variant breaks exactly one rule, named by Rule, and has a
//     one-line Summary, so that help and reports can list them all.
package teaching
